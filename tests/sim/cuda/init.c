/* Driver initialisation and devices of the simulated CUDA driver: cuInit,
 * cuDriverGetVersion and the cuDeviceGet* queries. The simulated GPUs come
 * from the environment, read once at the first cuInit:
 *   NCCLSIM_GPUS            number of GPUs in the "machine" (default 8)
 *   NCCLSIM_GPU_NAME        their name (default "NCCLSIM Virtual GPU")
 *   NCCLSIM_DRIVER_VERSION  what cuDriverGetVersion says (default 13000)
 *   CUDA_VISIBLE_DEVICES    which of them this process sees, as the driver
 *                           reads it: indices or GPU-<uuid prefix>, comma
 *                           separated, parsing stops at the first invalid one
 *
 * The driver tears itself down at exit, as the real one does: the first
 * successful cuInit registers an exit handler (atexit), and once it ran
 * every call that needs an initialised driver, cuInit, cuEventQuery and
 * cuStreamSynchronize included, answers CUDA_ERROR_DEINITIALIZED. So exit
 * handlers registered before cuInit (they run after it) and library
 * destructors see a driver that is gone; those registered after cuInit
 * still see it whole. (Measured on an H100, driver 580.159.04: a pair of
 * events queried from an atexit handler registered before cuInit, and from
 * an ELF destructor, answered 4, DEINITIALIZED; from one registered after
 * cuInit, 0.)
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_cuda.h"
#include "sim_memory.h"

#define DEFAULT_GPUS 8
#define DEFAULT_GPU_NAME "NCCLSIM Virtual GPU"
#define DEFAULT_DRIVER_VERSION 13000
#define PCI_BUS_BASE 0x18

struct sim_device sim_devices[SIM_MAX_DEVICES];
int sim_device_count;
atomic_int sim_initialized;
atomic_int sim_torn_down;

static pthread_mutex_t init_mutex = PTHREAD_MUTEX_INITIALIZER;
static CUresult init_result = CUDA_ERROR_NOT_INITIALIZED;
static int init_done;
/* Not reset in a fork child: the handler registered stays registered there. */
static int teardown_registered;

static void teardown(void)
{
	atomic_store_explicit(&sim_torn_down, 1, memory_order_release);
}

void sim_warn(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "ncclsim-cuda: %s\n", line);
}

static long env_long(const char *name, long fallback, long min, long max)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return fallback;
	char *end;
	long n = strtol(v, &end, 10);
	if (*end || n < min || n > max) {
		sim_warn("ignoring %s=%s (want an integer in %ld..%ld)", name, v, min, max);
		return fallback;
	}
	return n;
}

int sim_driver_version(void)
{
	return (int)env_long("NCCLSIM_DRIVER_VERSION", DEFAULT_DRIVER_VERSION, 1, 1000000);
}

/* FNV-1a, to derive stable UUIDs from the host name and GPU index. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void describe_device(struct sim_device *d, int physical, const char *name)
{
	char host[256] = "localhost";
	gethostname(host, sizeof host - 1);
	d->physical = physical;
	snprintf(d->name, sizeof d->name, "%s", name);
	snprintf(d->pci_bus_id, sizeof d->pci_bus_id, "0000:%02X:00.0", (PCI_BUS_BASE + physical) & 0xff);
	uint64_t h1 = fnv1a(0xcbf29ce484222325ULL, host, strlen(host));
	h1 = fnv1a(h1, &physical, sizeof physical);
	uint64_t h2 = fnv1a(h1 ^ 0x5a5a5a5a5a5a5a5aULL, "ncclsim", 7);
	memcpy(d->uuid.bytes, &h1, 8);
	memcpy(d->uuid.bytes + 8, &h2, 8);
}

static void uuid_text(const CUuuid *u, char out[33])
{
	for (int i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", (unsigned char)u->bytes[i]);
}

/* "GPU-" then a prefix of the UUID (dashes ignored), like the driver. */
static int match_uuid(const struct sim_device *all, int n, const char *token)
{
	char want[64];
	size_t k = 0;
	for (const char *p = token + 4; *p && k < sizeof want - 1; p++)
		if (*p != '-')
			want[k++] = (char)(*p >= 'A' && *p <= 'F' ? *p - 'A' + 'a' : *p);
	want[k] = 0;
	if (k == 0)
		return -1;
	int found = -1;
	for (int i = 0; i < n; i++) {
		char text[33];
		uuid_text(&all[i].uuid, text);
		if (strncmp(text, want, k) == 0) {
			if (found >= 0)
				return -1; /* ambiguous */
			found = i;
		}
	}
	return found;
}

static void enumerate_devices(void)
{
	int gpus = (int)env_long("NCCLSIM_GPUS", DEFAULT_GPUS, 0, SIM_MAX_DEVICES);
	const char *name = getenv("NCCLSIM_GPU_NAME");
	if (!name || !*name)
		name = DEFAULT_GPU_NAME;
	static struct sim_device all[SIM_MAX_DEVICES];
	for (int i = 0; i < gpus; i++)
		describe_device(&all[i], i, name);

	const char *visible = getenv("CUDA_VISIBLE_DEVICES");
	sim_device_count = 0;
	if (!visible) {
		for (int i = 0; i < gpus; i++)
			sim_devices[sim_device_count++] = all[i];
		return;
	}
	char list[1024];
	snprintf(list, sizeof list, "%s", visible);
	int used[SIM_MAX_DEVICES] = {0};
	char *save = NULL;
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ' || *tok == '\t')
			tok++;
		char *end = tok + strlen(tok);
		while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = 0;
		int idx = -1;
		if (strncmp(tok, "GPU-", 4) == 0) {
			idx = match_uuid(all, gpus, tok);
		} else if (*tok) {
			char *e;
			long n = strtol(tok, &e, 10);
			if (!*e && n >= 0 && n < gpus)
				idx = (int)n;
		}
		if (idx < 0 || used[idx])
			break; /* the driver ignores everything from an invalid entry on */
		used[idx] = 1;
		sim_devices[sim_device_count++] = all[idx];
	}
}

/* A child forked after cuInit starts with a fresh, uninitialised driver:
 * the parent's contexts, streams and workers do not exist in it. (The real
 * driver refuses CUDA in such a child; the simulation is lenient.) */
static void atfork_child(void)
{
	pthread_mutex_init(&init_mutex, NULL);
	atomic_store(&sim_initialized, 0);
	init_done = 0;
	init_result = CUDA_ERROR_NOT_INITIALIZED;
	sim_registry_reset();
	sim_ctx_reset_all();
	sim_memory_reset_after_fork();
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void install_atfork(void) { pthread_atfork(NULL, NULL, atfork_child); }

SIM_API CUresult cuInit(unsigned int Flags)
{
	if (Flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_once(&atfork_once, install_atfork);
	if (atomic_load_explicit(&sim_torn_down, memory_order_acquire))
		return CUDA_ERROR_DEINITIALIZED;
	pthread_mutex_lock(&init_mutex);
	if (!init_done) {
		enumerate_devices();
		for (int i = 0; i < sim_device_count; i++)
			sim_contexts[i].device = i;
		init_result = sim_device_count > 0 ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
		init_done = 1;
		if (init_result == CUDA_SUCCESS) {
			atomic_store_explicit(&sim_initialized, 1, memory_order_release);
			if (!teardown_registered && atexit(teardown) == 0)
				teardown_registered = 1;
		}
	}
	CUresult r = init_result;
	pthread_mutex_unlock(&init_mutex);
	return r;
}

SIM_API CUresult cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = sim_driver_version();
	return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGetCount(int *count)
{
	SIM_REQUIRE_INIT();
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = sim_device_count;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	SIM_REQUIRE_INIT();
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal < 0 || ordinal >= sim_device_count)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	SIM_REQUIRE_INIT();
	if (dev < 0 || dev >= sim_device_count)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", sim_devices[dev].name);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	SIM_REQUIRE_INIT();
	if (dev < 0 || dev >= sim_device_count)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!pciBusId || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(pciBusId, (size_t)len, "%s", sim_devices[dev].pci_bus_id);
	return CUDA_SUCCESS;
}

/* cuda.h maps cuDeviceGetUuid to cuDeviceGetUuid_v2; the legacy spelling
 * is defined in legacy.c. Without MIG both return the GPU's UUID. */
SIM_API CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	SIM_REQUIRE_INIT();
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev < 0 || dev >= sim_device_count)
		return CUDA_ERROR_INVALID_DEVICE;
	*uuid = sim_devices[dev].uuid;
	return CUDA_SUCCESS;
}
