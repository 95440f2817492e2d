/* The reaper's only contact with the outside: raw system calls, its entry
 * point, and nothing else. No libc is linked (the reaper must run in a root
 * file system that has none), so each architecture gets a few lines of
 * inline assembly here. */
#pragma once

#include <asm/unistd.h>

#if defined(__x86_64__)

/* The kernel enters _start with argc at the stack pointer, then argv, a
 * NULL, envp, a NULL. The ABI wants the stack 16-byte aligned at a call. */
__asm__(".text\n"
	".global _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call reaper_main\n"
	"	hlt\n");

static inline long raw_syscall(long number, long a, long b, long c, long d, long e)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	long result;
	__asm__ volatile("syscall"
			 : "=a"(result)
			 : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return result;
}

#elif defined(__aarch64__)

/* sp is 16-byte aligned at entry; x0 gets the stack for reaper_main. */
__asm__(".text\n"
	".global _start\n"
	"_start:\n"
	"	mov x29, #0\n"
	"	mov x30, #0\n"
	"	mov x0, sp\n"
	"	bl reaper_main\n"
	"	brk #0\n");

static inline long raw_syscall(long number, long a, long b, long c, long d, long e)
{
	register long x8 __asm__("x8") = number;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4)
			 : "memory");
	return x0;
}

#else
#error "corral-reaper: no system calls for this architecture yet (x86_64, aarch64)"
#endif

/* Results in [-4095, -1] are -errno, as the kernel returns them. */
#define SYSCALL_FAILED(result) ((unsigned long)(result) > -4096UL)
