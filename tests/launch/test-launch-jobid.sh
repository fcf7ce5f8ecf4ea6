#!/bin/sh
# The job id rules (interpose/job.h), each asserted by the job directory a
# real preloaded process creates: the trainer alone (rank 0 of 1, one step,
# NCCLWATCH_KEEP=1 so its segment stays, its own --rendezvous directory as
# its default one is named after the unsanitized run id) with a launcher's
# variables set by hand, every other launcher variable removed.
# NCCLWATCH_JOB wins over all; then TORCHELASTIC_RUN_ID unless "none";
# SLURM_JOB_ID[.SLURM_STEP_ID] (also for torchrun inside a Slurm job);
# torchrun's run id "none" across nodes (GROUP_WORLD_SIZE > 1) gives
# torchrun-<MASTER_ADDR>-<MASTER_PORT>, on one node the parent's
# ppid-<pid>-<start ticks>; the job part of OMPI_MCA_orte_hnp_uri (before
# PMIX_NAMESPACE); PMIX_NAMESPACE; else ppid-... . Empty values count as
# unset; characters outside [A-Za-z0-9._-] become '_', "." or ".." "job".
. "$NW_ROOT/tests/lib.sh"
nw_use_sim
[ -f "$NW_LIB" ] || fail "$NW_LIB not built"
[ -x "$NW_TRAINER" ] || fail "$NW_TRAINER not built"
preload=$(nw_preload)

# The parent of the trainer is this shell: its start time in clock ticks,
# field 22 of /proc/$$/stat (the 20th after the command name).
ticks=$(sed 's/.*) //' "/proc/$$/stat" | cut -d' ' -f20)
ppid_job="ppid-$$-$ticks"

n=0
# job_is EXPECTED VAR=VALUE...: the trainer run with only these launcher
# variables creates $NCCLWATCH_DIR/EXPECTED and its segment in it.
job_is() {
	want=$1; shift
	n=$((n + 1))
	dir="$T/shm-$n"
	nw_bounded 60 env -u NCCLWATCH_JOB -u TORCHELASTIC_RUN_ID -u SLURM_JOB_ID -u SLURM_STEP_ID \
		-u GROUP_WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT -u OMPI_MCA_orte_hnp_uri -u PMIX_NAMESPACE \
		-u RANK -u WORLD_SIZE -u LOCAL_RANK -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE \
		-u SLURM_PROCID -u SLURM_NTASKS -u PMI_RANK -u PMI_SIZE \
		NCCLWATCH_DIR="$dir" NCCLWATCH_KEEP=1 LD_PRELOAD="$preload" "$@" \
		"$NW_TRAINER" --steps 1 --count 8 --rendezvous "$T/rdv-$n" > "$T/job-$n.out" 2>&1
	rc=$?
	[ $rc = 0 ] || { cat "$T/job-$n.out"; fail "trainer with $*: exit status $rc"; }
	got=$(find "$dir" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | sort | tr '\n' ' ')
	assert_eq "$got" "$want " "job directory with: ${*:-nothing set}"
	assert_eq "$(find "$dir/$want" -name '*.seg' | wc -l)" 1 "segments in $want"
	note "$want  <=  ${*:-nothing set}"
}

note "NCCLWATCH_JOB wins over every launcher's id"
job_is myjob NCCLWATCH_JOB=myjob TORCHELASTIC_RUN_ID=abc SLURM_JOB_ID=4242 \
	OMPI_MCA_orte_hnp_uri='1234567.0;tcp://10.0.0.1:5000' PMIX_NAMESPACE=ns1
note "torchrun's run id (--rdzv_id), unless it is 'none'"
job_is abc TORCHELASTIC_RUN_ID=abc SLURM_JOB_ID=4242 OMPI_MCA_orte_hnp_uri='1234567.0;tcp://10.0.0.1:5000'
job_is "$ppid_job" TORCHELASTIC_RUN_ID=none GROUP_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500
job_is torchrun-10.1.2.3-29500 TORCHELASTIC_RUN_ID=none GROUP_WORLD_SIZE=2 MASTER_ADDR=10.1.2.3 MASTER_PORT=29500
job_is torchrun-node-0.cluster-29511 TORCHELASTIC_RUN_ID=none GROUP_WORLD_SIZE=16 MASTER_ADDR=node-0.cluster MASTER_PORT=29511
note "Slurm: the job, and the step when there is one (torchrun inside Slurm too)"
job_is 4242 SLURM_JOB_ID=4242 OMPI_MCA_orte_hnp_uri='1234567.0;tcp://10.0.0.1:5000' PMIX_NAMESPACE=ns1
job_is 4242.3 SLURM_JOB_ID=4242 SLURM_STEP_ID=3
job_is 4242.0 SLURM_JOB_ID=4242 SLURM_STEP_ID=0 TORCHELASTIC_RUN_ID=none GROUP_WORLD_SIZE=2 MASTER_ADDR=10.1.2.3 MASTER_PORT=29500
note "Open MPI: the job family of the HNP's URI, before PMIX_NAMESPACE"
job_is 1234567 OMPI_MCA_orte_hnp_uri='1234567.0;tcp://10.0.0.1:5000;tcp6://[fd00::2]:60821' PMIX_NAMESPACE=ns1
job_is slurm.pmix.4242.0 PMIX_NAMESPACE=slurm.pmix.4242.0
note "nothing set, or only empty values: the parent process"
job_is "$ppid_job"
job_is "$ppid_job" NCCLWATCH_JOB= TORCHELASTIC_RUN_ID= SLURM_JOB_ID= PMIX_NAMESPACE=
job_is 77 NCCLWATCH_JOB= SLURM_JOB_ID=77
note "characters outside [A-Za-z0-9._-] become '_'"
job_is 'a_b_c_d_e' NCCLWATCH_JOB='a b/c:d*e'
job_is torchrun-fe80__1-29500 TORCHELASTIC_RUN_ID=none GROUP_WORLD_SIZE=2 MASTER_ADDR=fe80::1 MASTER_PORT=29500
job_is run_1_x TORCHELASTIC_RUN_ID='run/1 x'
job_is job NCCLWATCH_JOB=..
