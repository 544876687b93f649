/* The host's own costs beneath every launch (issue 26, `./run bench`): a
 * program without libc that touches PAGES fresh pages of its bss
 * and exits. Against bare /bin/true in the same rounds it shows what an exec
 * costs before any start-up code runs, and what one page first touched
 * costs: on a host whose page tables are shadowed by the hypervisor (a PVM
 * or shadow-paging guest), a fresh page is several microseconds, which is
 * why aasm-launch counts the pages it touches as it counts its system calls.
 *
 * No libc, no stack protector, no PIE: nothing runs before _start. */
#define PAGE 4096

static volatile char pages[(PAGES > 0 ? PAGES : 1) * PAGE];

static void exit_now(void) {
#if defined(__x86_64__)
  __asm__ volatile("mov $60, %%eax\n\txor %%edi, %%edi\n\tsyscall" ::: "memory");
#elif defined(__aarch64__)
  __asm__ volatile("mov x8, #93\n\tmov x0, #0\n\tsvc #0" ::: "memory");
#else
#error "bench-empty-program: exit_group for this architecture"
#endif
  for (;;) {
  }
}

void _start(void) {
  for (int i = 0; i < PAGES; i++) pages[i * PAGE] = 1;
  exit_now();
}
