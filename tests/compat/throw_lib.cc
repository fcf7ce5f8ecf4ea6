// throw_lib: a C++ library that throws and catches, loaded by dlopen
// (tests/compat/throw_probe.c), as torch, pybind11 modules and JAX plugins
// are. Each throw goes through libstdc++'s __cxa_throw to whatever
// _Unwind_RaiseException the dynamic loader bound for libstdc++.
#include <stdexcept>

extern "C" __attribute__((visibility("default"))) long nw_throw_catch(long n)
{
	long caught = 0;
	for (long i = 0; i < n; i++) {
		try {
			throw std::runtime_error("probe");
		} catch (const std::exception &) {
			caught++;
		}
	}
	return caught;
}
