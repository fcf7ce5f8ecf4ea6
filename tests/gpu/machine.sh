#!/bin/sh
# machine: what the GPU machine has, one fact a line (the summary's head).
# Reads only; nothing here needs the network or writes outside $1.
out=${1:-/tmp}
fact() { printf '%-14s %s\n' "$1:" "$2"; }
fact os "$(. /etc/os-release 2>/dev/null; echo "$PRETTY_NAME") $(uname -r)"
fact gpu "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
for c in gcc make nvcc python3 mpirun; do fact "$c" "$(command -v $c 2>/dev/null || echo none)"; done
fact glibc "$(ldd --version 2>/dev/null | head -1)"
fact python "$(python3 -c 'import sys,sysconfig;print(sys.version.split()[0], sys.executable, sysconfig.get_paths()["include"], "shared" if sysconfig.get_config_var("Py_ENABLE_SHARED") else "static")' 2>&1 | tail -1)"
fact torch "$(python3 -c 'import torch;print(torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())))' 2>&1 | tail -1)"
fact jax "$(python3 -c 'import jax;print(jax.__version__)' 2>&1 | tail -1)"
fact nccl-wheel "$(python3 -c 'import nvidia.nccl as n;print(list(n.__path__)[0])' 2>&1 | tail -1)"
fact ptrace "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo no-yama)"
timeout 60 find / \( -path /proc -o -path /sys -o -path /dev \) -prune -o \
	\( -name 'libnccl.so*' -o -name 'libcuda.so*' -o -name 'libcudart.so*' -o -name nccl.h \
	-o -name pycore_frame.h -o -name 'libpython3*' -o -name 'libjansson.so*' -o -name 'libunwind*.so*' \
	-o -name jansson.h -o -name libunwind.h \) -print 2>/dev/null | grep -v "/share/\|/dpkg/\|/archives/" | sort > "$out/machine-files.txt"
sed 's/^/file:          /' "$out/machine-files.txt"
