/* Correct results of every collective for every datatype and every
 * reduction (Sum, Prod, Max, Min, Avg, PreMulSum with a host-immediate and
 * with a device scalar), with N ranks in N processes, at a small count and
 * at one that needs many staging steps; in-place variants too.
 * Usage: nccl-colls NRANKS
 * Values are small integers, exact in every type (fp8 included), so the
 * expected result is exact whatever the order of reduction.
 */
#include "t_lib.h"

#include <math.h>
#include <stdint.h>

/* ---- independent decoders; encoders by search over the decoder ---- */
static double dec_half(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 1024, e - 25);
	return (h >> 15) ? -v : v;
}
static double dec_bf16(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;
	memcpy(&f, &x, 4);
	return f;
}
static double dec_fp8(uint8_t v, int eb)
{
	int mb = 7 - eb, bias = (1 << (eb - 1)) - 1, e = (v >> mb) & ((1 << eb) - 1), m = v & ((1 << mb) - 1);
	if (eb == 4 && e == 15 && m == 7) return NAN;
	if (eb == 5 && e == 31) return m ? NAN : INFINITY;
	double r = e == 0 ? ldexp(m, 1 - bias - mb) : ldexp(m | (1 << mb), e - bias - mb);
	return (v >> 7) ? -r : r;
}

static size_t tsize(ncclDataType_t t)
{
	static const size_t s[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };
	return s[t];
}

static double load(ncclDataType_t t, const void *p, size_t i)
{
	switch (t) {
	case ncclInt8: return ((const int8_t *)p)[i];
	case ncclUint8: return ((const uint8_t *)p)[i];
	case ncclInt32: return ((const int32_t *)p)[i];
	case ncclUint32: return ((const uint32_t *)p)[i];
	case ncclInt64: return (double)((const int64_t *)p)[i];
	case ncclUint64: return (double)((const uint64_t *)p)[i];
	case ncclFloat16: return dec_half(((const uint16_t *)p)[i]);
	case ncclFloat32: return ((const float *)p)[i];
	case ncclFloat64: return ((const double *)p)[i];
	case ncclBfloat16: return dec_bf16(((const uint16_t *)p)[i]);
	case ncclFloat8e4m3: return dec_fp8(((const uint8_t *)p)[i], 4);
	default: return dec_fp8(((const uint8_t *)p)[i], 5);
	}
}

/* code of small non-negative integers and of k/8, per 16/8-bit float type */
static uint16_t enc_table[12][256];  /* index: value * 8 (0 .. 31.875) */
static void build_enc(void)
{
	ncclDataType_t fl[] = { ncclFloat16, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2 };
	for (int k = 0; k < 4; k++) {
		ncclDataType_t t = fl[k];
		unsigned ncodes = tsize(t) == 2 ? 65536 : 256;
		for (int i = 0; i < 256; i++) enc_table[t][i] = 0xffff;
		for (unsigned c = 0; c < ncodes; c++) {
			uint16_t c16 = c;
			uint8_t c8 = c;
			double v = load(t, tsize(t) == 2 ? (void *)&c16 : (void *)&c8, 0);
			double x = v * 8;
			if (v >= 0 && x < 256 && x == floor(x) && !signbit(v) && enc_table[t][(int)x] == 0xffff)
				enc_table[t][(int)x] = c;
		}
	}
}

static void store(ncclDataType_t t, void *p, size_t i, double v)
{
	switch (t) {
	case ncclInt8: ((int8_t *)p)[i] = (int8_t)v; return;
	case ncclUint8: ((uint8_t *)p)[i] = (uint8_t)v; return;
	case ncclInt32: ((int32_t *)p)[i] = (int32_t)v; return;
	case ncclUint32: ((uint32_t *)p)[i] = (uint32_t)v; return;
	case ncclInt64: ((int64_t *)p)[i] = (int64_t)v; return;
	case ncclUint64: ((uint64_t *)p)[i] = (uint64_t)v; return;
	case ncclFloat32: ((float *)p)[i] = (float)v; return;
	case ncclFloat64: ((double *)p)[i] = v; return;
	default: break;
	}
	int x = (int)(v * 8);
	CHECK(v >= 0 && x < 256 && x == v * 8 && enc_table[t][x] != 0xffff, "value %g not encodable in type %d", v, t);
	if (tsize(t) == 2) ((uint16_t *)p)[i] = enc_table[t][x];
	else ((uint8_t *)p)[i] = (uint8_t)enc_table[t][x];
}

static int is_float(ncclDataType_t t) { return t >= ncclFloat16; }

/* ---- the values ---- */
enum { R_SUM, R_PROD, R_MAX, R_MIN, R_AVG, R_PREMUL_HOST, R_PREMUL_DEV, R_COUNT };
static const char *rname[] = { "sum", "prod", "max", "min", "avg", "premulsum-host", "premulsum-device" };

static double val(int red, int r, size_t i)
{
	switch (red) {
	case R_PROD: return (r < 3 && (i + r) % 2) ? 2 : 1;          /* product <= 8 */
	case R_MAX: case R_MIN: return (double)((r * 5 + i * 3) % 9);
	default: return (double)((i + r) % 2);                     /* sums <= 8 (x2 <= 16) */
	}
}
static double mv(ncclDataType_t t, int r, size_t i)  /* data-movement values */
{
	return t == ncclFloat8e4m3 || t == ncclFloat8e5m2 ? (double)((r * 5 + i * 3) % 9)
	                                                 : (double)((r * 31 + i * 7) % 32);
}

static double expect_red(int red, ncclDataType_t t, int n, size_t i)
{
	double acc = val(red, 0, i);
	for (int r = 1; r < n; r++) {
		double x = val(red, r, i);
		switch (red) {
		case R_PROD: acc *= x; break;
		case R_MAX: acc = x > acc ? x : acc; break;
		case R_MIN: acc = x < acc ? x : acc; break;
		default: acc += x; break;
		}
	}
	if (red == R_AVG) acc = is_float(t) ? acc / n : floor(acc / n);
	if (red == R_PREMUL_HOST || red == R_PREMUL_DEV) acc *= 2;
	return acc;
}

enum { C_ALLREDUCE, C_REDUCE, C_REDUCESCATTER, C_BROADCAST, C_BCAST, C_ALLGATHER, C_ALLTOALL, C_GATHER, C_SCATTER, C_NUM };
static const char *cname[] = { "allreduce", "reduce", "reducescatter", "broadcast", "bcast", "allgather",
                               "alltoall", "gather", "scatter" };

static long nchecked;

static void check_one(int rank, int n, CUstream s, ncclComm_t comm, int coll, ncclDataType_t t, int red,
                      size_t count, int inplace)
{
	size_t e = tsize(t), big = (size_t)n * count;
	unsigned char *send = calloc(big + 1, e), *recv = calloc(big + 1, e);
	void *scalar = malloc(8);
	ncclRedOp_t op = ncclSum;
	int root = n - 1;
	CHECK(send && recv && scalar, "out of memory");
	int reducing = coll <= C_REDUCESCATTER;
	if (reducing) {
		static const ncclRedOp_t base[] = { ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg };
		if (red < R_PREMUL_HOST) op = base[red];
		else {
			store(t, scalar, 0, 2);
			NCCL_OK(ncclRedOpCreatePreMulSum(&op, scalar, t,
			                                 red == R_PREMUL_HOST ? ncclScalarHostImmediate : ncclScalarDevice, comm));
		}
	}
	/* inputs */
	size_t nin = (coll == C_REDUCESCATTER || coll == C_ALLTOALL || coll == C_SCATTER) ? big : count;
	for (size_t i = 0; i < nin; i++) store(t, send, i, reducing ? val(red, rank, i) : mv(t, rank, i));
	/* in place: the send part lives inside recv where NCCL says */
	const void *sb = send;
	if (inplace) {
		if (coll == C_ALLGATHER) { memcpy(recv + rank * count * e, send, count * e); sb = recv + rank * count * e; }
		else if (coll == C_REDUCESCATTER) { memcpy(recv, send, big * e); sb = recv; }
		else if (coll == C_ALLREDUCE || coll == C_BROADCAST) { memcpy(recv, send, count * e); sb = recv; }
	}
	void *rb = inplace && coll == C_REDUCESCATTER ? recv + rank * count * e : recv;
	switch (coll) {
	case C_ALLREDUCE: NCCL_OK(ncclAllReduce(sb, rb, count, t, op, comm, s)); break;
	case C_REDUCE: NCCL_OK(ncclReduce(sb, rb, count, t, op, root, comm, s)); break;
	case C_REDUCESCATTER: NCCL_OK(ncclReduceScatter(sb, rb, count, t, op, comm, s)); break;
	case C_BROADCAST: NCCL_OK(ncclBroadcast(sb, rb, count, t, root, comm, s)); break;
	case C_BCAST:
		if (rank == root) memcpy(recv, send, count * e);
		NCCL_OK(ncclBcast(recv, count, t, root, comm, s));
		break;
	case C_ALLGATHER: NCCL_OK(ncclAllGather(sb, rb, count, t, comm, s)); break;
	case C_ALLTOALL: NCCL_OK(ncclAlltoAll(sb, rb, count, t, comm, s)); break;
	case C_GATHER: NCCL_OK(ncclGather(sb, rb, count, t, root, comm, s)); break;
	case C_SCATTER: NCCL_OK(ncclScatter(sb, rb, count, t, root, comm, s)); break;
	}
	CU_OK(cuStreamSynchronize(s));
	if (reducing && red >= R_PREMUL_HOST) NCCL_OK(ncclRedOpDestroy(op, comm));
	/* expected */
	const unsigned char *out = rb;
	for (size_t i = 0; i < count; i++) {
		double want, got;
		switch (coll) {
		case C_ALLREDUCE:
		case C_REDUCE:
			if (coll == C_REDUCE && rank != root) continue;
			want = expect_red(red, t, n, i); got = load(t, out, i);
			break;
		case C_REDUCESCATTER:
			want = expect_red(red, t, n, rank * count + i); got = load(t, out, i);
			break;
		case C_BROADCAST: case C_BCAST:
			want = mv(t, root, i); got = load(t, out, i);
			break;
		case C_SCATTER:
			want = mv(t, root, rank * count + i); got = load(t, out, i);
			break;
		default:  /* allgather, alltoall, gather: check every block */
			if (coll == C_GATHER && rank != root) continue;
			for (int r = 0; r < n; r++) {
				want = coll == C_ALLTOALL ? mv(t, r, rank * count + i) : mv(t, r, i);
				got = load(t, out, r * count + i);
				CHECK(want == got, "%s %s type %d count %zu inplace %d: block %d element %zu = %g, want %g",
				      cname[coll], "", t, count, inplace, r, i, got, want);
				nchecked++;
			}
			continue;
		}
		CHECK(want == got, "%s %s type %d count %zu inplace %d: element %zu = %g, want %g", cname[coll],
		      reducing ? rname[red] : "", t, count, inplace, i, got, want);
		nchecked++;
	}
	free(send); free(recv); free(scalar);
}

static void rank_main(int rank, int n, ncclUniqueId id, CUstream s)
{
	ncclComm_t comm;
	build_enc();
	NCCL_OK(ncclCommInitRank(&comm, n, id, rank));
	size_t counts[] = { 3, 20000 };
	for (int ci = 0; ci < 2; ci++)
		for (int t = 0; t < ncclNumTypes; t++)
			for (int coll = 0; coll < C_NUM; coll++) {
				int nred = coll <= C_REDUCESCATTER ? R_COUNT : 1;
				for (int red = 0; red < nred; red++) check_one(rank, n, s, comm, coll, t, red, counts[ci], 0);
			}
	/* in-place forms, a few types */
	ncclDataType_t ip[] = { ncclFloat32, ncclInt8, ncclBfloat16 };
	for (int k = 0; k < 3; k++) {
		check_one(rank, n, s, comm, C_ALLREDUCE, ip[k], R_SUM, 20000, 1);
		check_one(rank, n, s, comm, C_REDUCESCATTER, ip[k], R_MAX, 20000, 1);
		check_one(rank, n, s, comm, C_ALLGATHER, ip[k], 0, 20000, 1);
		check_one(rank, n, s, comm, C_BROADCAST, ip[k], 0, 20000, 1);
	}
	NCCL_OK(ncclCommDestroy(comm));
	printf("rank %d: %ld elements checked\n", rank, nchecked);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	CHECK(n >= 1 && n <= 64, "usage: %s NRANKS", argv[0]);
	int bad = t_run_ranks(n, t_make_id(0), rank_main, -1);
	printf(bad ? "FAILED\n" : "PASS\n");
	return bad;
}
