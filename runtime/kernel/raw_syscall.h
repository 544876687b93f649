// System calls without libc: no errno, no TLS, no PLT. For code that runs in
// a process sharing the supervisor's memory (CLONE_VM) while the supervisor
// runs too: libc's wrappers would write the supervisor's errno, which lives
// in the thread-local area both processes see.
#pragma once

namespace aasm::raw {

// Returns the kernel's result: a value, or -errno. Six arguments for
// mount(2) and mount_setattr(2); unused ones are passed as 0, which the
// kernel ignores for calls that take fewer.
inline long syscall6(long number, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
#if defined(__x86_64__)
  long result;
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  register long r9 asm("r9") = f;
  asm volatile("syscall"
               : "=a"(result)
               : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return result;
#elif defined(__aarch64__)
  register long x8 asm("x8") = number;
  register long x0 asm("x0") = a;
  register long x1 asm("x1") = b;
  register long x2 asm("x2") = c;
  register long x3 asm("x3") = d;
  register long x4 asm("x4") = e;
  register long x5 asm("x5") = f;
  asm volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
  return x0;
#else
#error "raw system calls are written for x86_64 and aarch64 only"
#endif
}

inline long syscall4(long number, long a = 0, long b = 0, long c = 0, long d = 0) {
  return syscall6(number, a, b, c, d);
}

}  // namespace aasm::raw
