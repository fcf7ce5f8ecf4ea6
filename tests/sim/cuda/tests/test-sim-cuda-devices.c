/* Initialisation, devices and error strings of the simulated CUDA driver.
 * Every case that needs its own environment (NCCLSIM_GPUS,
 * CUDA_VISIBLE_DEVICES, ...) runs this binary again as a child process with
 * that environment and a case name, as a fresh process is what reads it. */
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* Before cuInit everything but a few calls is CUDA_ERROR_NOT_INITIALIZED. */
static void case_not_initialized(void)
{
	const CUresult E = CUDA_ERROR_NOT_INITIALIZED;
	int n;
	CUdevice d;
	CUcontext c = NULL;
	CUstream s = NULL;
	CUevent e = NULL;
	CUdeviceptr p = 0;
	char buf[64];
	CUuuid uuid;
	CUstreamCaptureStatus status;
	CUgraph g;
	OK(cuDriverGetVersion(&n));
	const char *str;
	OK(cuGetErrorString(CUDA_ERROR_NOT_INITIALIZED, &str));
	OK(cuGetErrorName(CUDA_ERROR_NOT_INITIALIZED, &str));
	void *fn;
	OK(cuGetProcAddress("cuInit", &fn, 13000, 0, NULL)); /* cudart uses it to find cuInit */
	CHECK_CU(cuDeviceGetCount(&n), E);
	CHECK_CU(cuDeviceGet(&d, 0), E);
	CHECK_CU(cuDeviceGetName(buf, sizeof buf, 0), E);
	CHECK_CU(cuDeviceGetPCIBusId(buf, sizeof buf, 0), E);
	CHECK_CU(cuDeviceGetUuid(&uuid, 0), E);
	CHECK_CU(cuDevicePrimaryCtxRetain(&c, 0), E);
	CHECK_CU(cuDevicePrimaryCtxRelease(0), E);
	CHECK_CU(cuCtxGetCurrent(&c), E);
	CHECK_CU(cuCtxSetCurrent(c), E);
	CHECK_CU(cuCtxPushCurrent(c), E);
	CHECK_CU(cuCtxPopCurrent(&c), E);
	CHECK_CU(cuCtxGetDevice(&d), E);
	CHECK_CU(cuCtxSynchronize(), E);
	CHECK_CU(cuStreamCreate(&s, 0), E);
	CHECK_CU(cuStreamDestroy(s), E);
	CHECK_CU(cuStreamSynchronize(s), E);
	CHECK_CU(cuStreamQuery(s), E);
	CHECK_CU(cuStreamGetCtx(s, &c), E);
	CHECK_CU(cuStreamIsCapturing(s, &status), E);
	CHECK_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), E);
	CHECK_CU(cuStreamEndCapture(s, &g), E);
	CHECK_CU(cuStreamWaitEvent(s, e, 0), E);
	CHECK_CU(cuEventCreate(&e, 0), E);
	CHECK_CU(cuEventRecord(e, s), E);
	CHECK_CU(cuEventQuery(e), E);
	CHECK_CU(cuEventSynchronize(e), E);
	CHECK_CU(cuEventDestroy(e), E);
	CHECK_CU(cuMemAlloc(&p, 16), E);
	CHECK_CU(cuMemFree(p), E);
	CHECK_CU(cuMemcpyHtoD(p, buf, 1), E);
	CHECK_CU(cuMemcpyDtoH(buf, p, 1), E);
	CHECK_CU(cuMemsetD8(p, 0, 1), E);
	CHECK_CU(cuGraphDestroy(NULL), E);
	CHECK_CU(simStreamEnqueue(NULL, gate_item, NULL, NULL), E);
	CHECK(simStreamDevice(NULL) == -1);
	CHECK(simStreamCapturing(NULL) == 0);
	CHECK_CU(cuInit(1), CUDA_ERROR_INVALID_VALUE);
	OK(cuInit(0));
	OK(cuInit(0)); /* again: fine */
	OK(cuDeviceGetCount(&n));
	CHECK(n == 8); /* the default */
}

/* Prints what a process sees, one device a line, for the parent to compare. */
static void case_list(void)
{
	CUresult r = cuInit(0);
	if (r != CUDA_SUCCESS) {
		printf("cuInit %s\n", check_error_name(r));
		return;
	}
	int n, version;
	OK(cuDeviceGetCount(&n));
	OK(cuDriverGetVersion(&version));
	printf("version %d count %d\n", version, n);
	for (int i = 0; i < n; i++) {
		char name[128], bus[32];
		CUuuid u;
		OK(cuDeviceGetName(name, sizeof name, i));
		OK(cuDeviceGetPCIBusId(bus, sizeof bus, i));
		OK(cuDeviceGetUuid(&u, i));
		printf("%d %s|%s|", i, bus, name);
		for (int k = 0; k < 16; k++)
			printf("%02x", (unsigned char)u.bytes[k]);
		printf("\n");
	}
	CUdevice d;
	CHECK_CU(cuDeviceGet(&d, n), CUDA_ERROR_INVALID_DEVICE);
	CHECK_CU(cuDeviceGet(&d, -1), CUDA_ERROR_INVALID_DEVICE);
}

/* Runs this binary with `case_name` and the given environment changes
 * ("NAME=value", or "NAME" to unset); returns its output. */
static char *run_case(const char *self, const char *case_name, const char *const env[])
{
	int fds[2];
	CHECK(pipe(fds) == 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		for (int i = 0; env[i]; i++) {
			char kv[256];
			snprintf(kv, sizeof kv, "%s", env[i]);
			char *eq = strchr(kv, '=');
			if (eq) {
				*eq = 0;
				setenv(kv, eq + 1, 1);
			} else {
				unsetenv(kv);
			}
		}
		execl(self, self, case_name, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	size_t cap = 1 << 16, len = 0;
	char *out = calloc(1, cap);
	ssize_t k;
	while (len < cap - 1 && (k = read(fds[0], out + len, cap - 1 - len)) > 0)
		len += (size_t)k;
	close(fds[0]);
	int status;
	CHECK(waitpid(pid, &status, 0) == pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "case %s failed (status 0x%x), output:\n%s", case_name, status, out);
		exit(1);
	}
	return out;
}

/* 1 if the output of the case holds `needle`. */
static int case_output_has(const char *self, const char *case_name, const char *const env[], const char *needle)
{
	char *out = run_case(self, case_name, env);
	int found = strstr(out, needle) != NULL;
	free(out);
	return found;
}

/* The line of visible device i ("i bus|name|uuid"), without the index. */
static const char *device_line(const char *out, int i, char *buf, size_t len)
{
	char prefix[16];
	snprintf(prefix, sizeof prefix, "\n%d ", i);
	const char *p = strstr(out, prefix);
	CHECK(p != NULL);
	p += strlen(prefix);
	size_t n = strcspn(p, "\n");
	CHECK(n < len);
	memcpy(buf, p, n);
	buf[n] = 0;
	return buf;
}

static void test_enumeration(const char *self)
{
	char a[256], b[256];
	const char *all_env[] = { "NCCLSIM_GPUS=4", "CUDA_VISIBLE_DEVICES", "NCCLSIM_GPU_NAME=Sim H100",
	                          "NCCLSIM_DRIVER_VERSION=12040", NULL };
	char *all = run_case(self, "list", all_env);
	CHECK(strstr(all, "version 12040 count 4\n") != NULL);
	CHECK(strstr(all, "\n0 0000:18:00.0|Sim H100|") != NULL);
	CHECK(strstr(all, "\n3 0000:1B:00.0|Sim H100|") != NULL);
	/* UUIDs differ between devices and are the same in another process */
	CHECK(strcmp(device_line(all, 0, a, sizeof a), device_line(all, 1, b, sizeof b)) != 0);
	char *again = run_case(self, "list", all_env);
	CHECK(strcmp(all, again) == 0);

	/* CUDA_VISIBLE_DEVICES renumbers: visible 0 is physical 2, 1 is 0 */
	const char *vis_env[] = { "NCCLSIM_GPUS=4", "CUDA_VISIBLE_DEVICES=2, 0", "NCCLSIM_GPU_NAME=Sim H100",
	                          "NCCLSIM_DRIVER_VERSION=12040", NULL };
	char *vis = run_case(self, "list", vis_env);
	CHECK(strstr(vis, "count 2\n") != NULL);
	CHECK(strcmp(device_line(vis, 0, a, sizeof a), device_line(all, 2, b, sizeof b)) == 0);
	CHECK(strcmp(device_line(vis, 1, a, sizeof a), device_line(all, 0, b, sizeof b)) == 0);

	/* parsing stops at the first invalid entry (7 of 4 GPUs), or a repeat */
	const char *bad_env[] = { "NCCLSIM_GPUS=4", "CUDA_VISIBLE_DEVICES=1,7,3", NULL };
	CHECK(case_output_has(self, "list", bad_env, "count 1\n"));
	const char *dup_env[] = { "NCCLSIM_GPUS=4", "CUDA_VISIBLE_DEVICES=3,2,3,1", NULL };
	CHECK(case_output_has(self, "list", dup_env, "count 2\n"));

	/* GPU-<uuid prefix> selects by UUID, like the driver */
	const char *uuid = strrchr(device_line(all, 3, a, sizeof a), '|') + 1;
	char sel[64];
	snprintf(sel, sizeof sel, "CUDA_VISIBLE_DEVICES=GPU-%.8s-%.4s", uuid, uuid + 8);
	const char *uuid_env[] = { "NCCLSIM_GPUS=4", sel, "NCCLSIM_GPU_NAME=Sim H100",
	                           "NCCLSIM_DRIVER_VERSION=12040", NULL };
	char *by_uuid = run_case(self, "list", uuid_env);
	CHECK(strstr(by_uuid, "count 1\n") != NULL);
	CHECK(strcmp(device_line(by_uuid, 0, a, sizeof a), device_line(all, 3, b, sizeof b)) == 0);

	/* no visible device, or none at all: cuInit says so */
	const char *none_env[] = { "CUDA_VISIBLE_DEVICES=", NULL };
	CHECK(case_output_has(self, "list", none_env, "cuInit CUDA_ERROR_NO_DEVICE"));
	const char *zero_env[] = { "NCCLSIM_GPUS=0", "CUDA_VISIBLE_DEVICES", NULL };
	CHECK(case_output_has(self, "list", zero_env, "cuInit CUDA_ERROR_NO_DEVICE"));

	/* defaults: 8 GPUs, the default name and driver version */
	const char *default_env[] = { "NCCLSIM_GPUS", "CUDA_VISIBLE_DEVICES", "NCCLSIM_GPU_NAME",
	                              "NCCLSIM_DRIVER_VERSION", NULL };
	char *def = run_case(self, "list", default_env);
	CHECK(strstr(def, "version 13000 count 8\n") != NULL);
	CHECK(strstr(def, "\n7 0000:1F:00.0|NCCLSIM Virtual GPU|") != NULL);
	free(all); free(again); free(vis); free(by_uuid); free(def);

	free(run_case(self, "not-initialized", default_env));
}

static void test_error_strings(void)
{
	const char *s;
	OK(cuGetErrorString(CUDA_ERROR_ILLEGAL_ADDRESS, &s));
	CHECK(strcmp(s, "an illegal memory access was encountered") == 0);
	OK(cuGetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &s));
	CHECK(strcmp(s, "CUDA_ERROR_ILLEGAL_ADDRESS") == 0);
	OK(cuGetErrorString(CUDA_ERROR_NOT_READY, &s));
	CHECK(strcmp(s, "device not ready") == 0);
	OK(cuGetErrorName(CUDA_SUCCESS, &s));
	CHECK(strcmp(s, "CUDA_SUCCESS") == 0);
	OK(cuGetErrorString(CUDA_ERROR_INVALID_HANDLE, &s));
	CHECK(strcmp(s, "invalid resource handle") == 0);
	s = "x";
	CHECK_CU(cuGetErrorString((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
	CHECK(s == NULL);
	CHECK_CU(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
	CHECK_CU(cuGetErrorName(CUDA_SUCCESS, NULL), CUDA_ERROR_INVALID_VALUE);
}

static void test_proc_address(void)
{
	void *fn, *plain = dlsym(RTLD_DEFAULT, "cuMemAlloc");
	CUdriverProcAddressQueryResult st;
	OK(cuGetProcAddress("cuMemAlloc", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st));
	CHECK(st == CU_GET_PROC_ADDRESS_SUCCESS && fn == (void *)cuMemAlloc); /* cuMemAlloc_v2 */
	OK(cuGetProcAddress("cuMemAlloc", &fn, 3000, 0, &st));
	CHECK(plain && fn == plain && fn != (void *)cuMemAlloc); /* the CUDA 2.0 ABI */
	OK(cuGetProcAddress("cuStreamBeginCapture", &fn, 12000, 0, &st));
	CHECK(fn == (void *)cuStreamBeginCapture_v2);
	OK(cuGetProcAddress("cuStreamQuery", &fn, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
	CHECK(fn == dlsym(RTLD_DEFAULT, "cuStreamQuery_ptsz") && fn != (void *)cuStreamQuery);
	OK(cuGetProcAddress("cuMemcpyHtoD", &fn, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
	CHECK(fn == dlsym(RTLD_DEFAULT, "cuMemcpyHtoD_v2_ptds"));
	OK(cuGetProcAddress("cuEventQuery", &fn, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
	CHECK(fn == (void *)cuEventQuery); /* no per-thread spelling */
	OK(cuGetProcAddress("cuEventQuery", &fn, 12000, 0, NULL));
	CHECK(fn == (void *)cuEventQuery);
	CHECK_CU(cuGetProcAddress("cuStreamBeginCapture", &fn, 9000, 0, &st), CUDA_ERROR_NOT_FOUND);
	CHECK(st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT && fn == NULL);
	CHECK_CU(cuGetProcAddress("malloc", &fn, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
	CHECK(st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND && fn == NULL);
	CHECK_CU(cuGetProcAddress("simStreamEnqueue", &fn, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
	CHECK_CU(cuGetProcAddress("cuNoSuchCall", &fn, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		if (strcmp(argv[1], "list") == 0)
			case_list();
		else if (strcmp(argv[1], "not-initialized") == 0)
			case_not_initialized();
		else
			return 2;
		return 0;
	}
	test_error_strings();
	test_proc_address();
	test_enumeration("/proc/self/exe");
	printf("ok\n");
	return 0;
}
