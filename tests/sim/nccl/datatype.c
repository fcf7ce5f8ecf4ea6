/* Datatypes and reductions of the simulated NCCL: element sizes, loads and
 * stores of every ncclDataType_t through double (half, bfloat16 and the two
 * fp8 formats converted with round-to-nearest-even; fp8 saturates to the
 * largest finite value like NCCL's __NV_SATFINITE conversions), and the
 * element-wise reduction for every ncclRedOp_t. Integer types are reduced
 * natively (wrapping like the GPU), floating types in double rounded to the
 * type after every step, in rank order, so every rank gets the same bits.
 */
#include "sim_nccl.h"

#include <math.h>
#include <string.h>

size_t sim_dtype_size(ncclDataType_t t)
{
	switch (t) {
	case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
	case ncclFloat16: case ncclBfloat16: return 2;
	case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
	case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
	default: return 0;
	}
}

/* ---- 16-bit floats ---- */
static float half_to_float(uint16_t h)
{
	int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	float v;
	if (exp == 0) v = ldexpf((float)man, -24);
	else if (exp == 31) v = man ? NAN : INFINITY;
	else v = ldexpf((float)(man | 0x400), exp - 25);
	return sign ? -v : v;
}

static uint16_t float_to_half(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000;
	uint32_t exp = (x >> 23) & 0xff, man = x & 0x7fffff;
	if (exp == 0xff) return sign | 0x7c00 | (man ? 0x200 : 0);
	int e = (int)exp - 127 + 15;
	if (e >= 31) return sign | 0x7c00;
	if (e <= 0) {  /* subnormal or zero in half */
		if (e < -10) return sign;
		man |= 0x800000;
		int shift = 14 - e;
		uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
		if (rem > halfway || (rem == halfway && (h & 1))) h++;
		return sign | h;
	}
	uint32_t h = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;  /* may carry into exp: right */
	return sign | h;
}

static float bf16_to_float(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;
	memcpy(&f, &x, 4);
	return f;
}

static uint16_t float_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	if ((x & 0x7fffffff) > 0x7f800000) return (x >> 16) | 0x40;  /* quiet NaN */
	x += 0x7fff + ((x >> 16) & 1);
	return x >> 16;
}

/* ---- fp8: decode by formula, encode by nearest in a sorted table ---- */
struct fp8_table { float pos[128]; int npos; };
static struct fp8_table e4m3, e5m2;
static pthread_once_t fp8_once = PTHREAD_ONCE_INIT;

static float fp8_decode(uint8_t v, int ebits)
{
	int mbits = 7 - ebits, bias = (1 << (ebits - 1)) - 1;
	int sign = v >> 7, exp = (v >> mbits) & ((1 << ebits) - 1), man = v & ((1 << mbits) - 1);
	float r;
	if (ebits == 4 && exp == 15 && man == 7) return NAN;            /* e4m3fn: no inf */
	if (ebits == 5 && exp == 31) return man ? NAN : (sign ? -INFINITY : INFINITY);
	if (exp == 0) r = ldexpf((float)man, 1 - bias - mbits);
	else r = ldexpf((float)(man | (1 << mbits)), exp - bias - mbits);
	return sign ? -r : r;
}

static void fp8_tables(void)
{
	struct { struct fp8_table *t; int ebits; } f[2] = { { &e4m3, 4 }, { &e5m2, 5 } };
	for (int k = 0; k < 2; k++) {
		f[k].t->npos = 0;
		for (int v = 0; v < 128; v++) {  /* codes 0..127 are +0 .. max, increasing */
			float x = fp8_decode(v, f[k].ebits);
			if (isnan(x) || isinf(x)) break;
			f[k].t->pos[f[k].t->npos++] = x;
		}
	}
}

static uint8_t fp8_encode(float f, const struct fp8_table *t, int ebits)
{
	if (isnan(f)) return ebits == 4 ? 0x7f : 0x7e;
	uint8_t sign = signbit(f) ? 0x80 : 0;
	float a = fabsf(f);
	if (a >= t->pos[t->npos - 1]) return sign | (uint8_t)(t->npos - 1);  /* saturate */
	int lo = 0, hi = t->npos - 1;   /* pos[lo] <= a < pos[hi] */
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (t->pos[mid] <= a) lo = mid; else hi = mid;
	}
	float dlo = a - t->pos[lo], dhi = t->pos[hi] - a;
	int code = dlo < dhi ? lo : dhi < dlo ? hi : ((lo & 1) ? hi : lo);
	return sign | (uint8_t)code;
}

double sim_load(ncclDataType_t t, const void *p, size_t i)
{
	switch (t) {
	case ncclInt8: return ((const int8_t *)p)[i];
	case ncclUint8: return ((const uint8_t *)p)[i];
	case ncclInt32: return ((const int32_t *)p)[i];
	case ncclUint32: return ((const uint32_t *)p)[i];
	case ncclInt64: return (double)((const int64_t *)p)[i];
	case ncclUint64: return (double)((const uint64_t *)p)[i];
	case ncclFloat16: return half_to_float(((const uint16_t *)p)[i]);
	case ncclFloat32: return ((const float *)p)[i];
	case ncclFloat64: return ((const double *)p)[i];
	case ncclBfloat16: return bf16_to_float(((const uint16_t *)p)[i]);
	case ncclFloat8e4m3: return fp8_decode(((const uint8_t *)p)[i], 4);
	case ncclFloat8e5m2: return fp8_decode(((const uint8_t *)p)[i], 5);
	default: return 0;
	}
}

void sim_store(ncclDataType_t t, void *p, size_t i, double v)
{
	switch (t) {
	case ncclInt8: ((int8_t *)p)[i] = (int8_t)v; break;
	case ncclUint8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case ncclInt32: ((int32_t *)p)[i] = (int32_t)v; break;
	case ncclUint32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case ncclInt64: ((int64_t *)p)[i] = (int64_t)v; break;
	case ncclUint64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	case ncclFloat16: ((uint16_t *)p)[i] = float_to_half((float)v); break;
	case ncclFloat32: ((float *)p)[i] = (float)v; break;
	case ncclFloat64: ((double *)p)[i] = v; break;
	case ncclBfloat16: ((uint16_t *)p)[i] = float_to_bf16((float)v); break;
	case ncclFloat8e4m3: pthread_once(&fp8_once, fp8_tables); ((uint8_t *)p)[i] = fp8_encode((float)v, &e4m3, 4); break;
	case ncclFloat8e5m2: pthread_once(&fp8_once, fp8_tables); ((uint8_t *)p)[i] = fp8_encode((float)v, &e5m2, 5); break;
	default: break;
	}
}

/* Integer reductions: signed values are combined as unsigned so overflow
 * wraps (as on the GPU) instead of being undefined. */
#define INT_REDUCE(T, U)                                                              \
	do {                                                                          \
		T scal = 0;                                                           \
		if (op->base == ncclNumOps) {                                         \
			if (op->scalar_devptr) memcpy(&scal, op->scalar_devptr, sizeof scal); \
			else memcpy(&scal, op->scalar, sizeof scal);                  \
		}                                                                     \
		for (size_t i = 0; i < n; i++) {                                      \
			T acc = 0;                                                    \
			for (int r = 0; r < nranks; r++) {                            \
				T x = ((const T *)in[r])[i];                          \
				if (op->base == ncclNumOps) x = (T)((U)x * (U)scal);  \
				if (r == 0) { acc = x; continue; }                    \
				switch (op->base) {                                   \
				case ncclProd: acc = (T)((U)acc * (U)x); break;       \
				case ncclMax: acc = x > acc ? x : acc; break;         \
				case ncclMin: acc = x < acc ? x : acc; break;         \
				default: acc = (T)((U)acc + (U)x); break;             \
				}                                                     \
			}                                                             \
			if (op->base == ncclAvg) acc = (T)(acc / (T)nranks);          \
			((T *)out)[i] = acc;                                          \
		}                                                                     \
	} while (0)

/* Round v to type t (as storing and loading it would). */
static double round_to(ncclDataType_t t, double v)
{
	unsigned char tmp[8];
	sim_store(t, tmp, 0, v);
	return sim_load(t, tmp, 0);
}

void sim_reduce(const struct sim_redop *op, int nranks, ncclDataType_t t,
                void *out, const void *const *in, size_t n)
{
	switch (t) {
	case ncclInt8: INT_REDUCE(int8_t, uint8_t); return;
	case ncclUint8: INT_REDUCE(uint8_t, uint8_t); return;
	case ncclInt32: INT_REDUCE(int32_t, uint32_t); return;
	case ncclUint32: INT_REDUCE(uint32_t, uint32_t); return;
	case ncclInt64: INT_REDUCE(int64_t, uint64_t); return;
	case ncclUint64: INT_REDUCE(uint64_t, uint64_t); return;
	default: break;
	}
	/* Floating types. Avg is a pre-multiplication by 1/nranks, as NCCL does
	 * for floating types; PreMulSum multiplies by the op's scalar. */
	int premul = op->base == ncclNumOps || op->base == ncclAvg;
	double scal = 1.0;
	if (op->base == ncclAvg) scal = round_to(t, 1.0 / nranks);
	else if (op->base == ncclNumOps)
		scal = sim_load(t, op->scalar_devptr ? op->scalar_devptr : (const void *)op->scalar, 0);
	for (size_t i = 0; i < n; i++) {
		double acc = 0;
		for (int r = 0; r < nranks; r++) {
			double x = sim_load(t, in[r], i);
			if (premul) x = round_to(t, x * scal);
			if (r == 0) { acc = x; continue; }
			switch (op->base) {
			case ncclProd: acc = round_to(t, acc * x); break;
			case ncclMax: acc = x > acc ? x : acc; break;
			case ncclMin: acc = x < acc ? x : acc; break;
			default: acc = round_to(t, acc + x); break;
			}
		}
		sim_store(t, out, i, acc);
	}
}
