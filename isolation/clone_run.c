#include "isolation/clone_run.h"

#if CLONE_RUN_SUPPORTED

#include <stddef.h>

long corral_clone3_trampoline(struct clone_args *args, size_t size, int (*fn)(void *), void *arg);

/* rdi = args, rsi = size, rdx = fn, rcx = arg. The syscall instruction
 * clobbers rcx and r11 only, so fn and arg ride in r8 and r9. The kernel
 * starts the child with rsp at the top of args->stack (16-byte aligned by
 * the caller), which is what `call` expects. */
__asm__(".text\n"
	".globl corral_clone3_trampoline\n"
	".type corral_clone3_trampoline, @function\n"
	"corral_clone3_trampoline:\n"
	"	mov %rdx, %r8\n"
	"	mov %rcx, %r9\n"
	"	mov $435, %eax\n" /* __NR_clone3 */
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jnz 1f\n"
	"	xor %ebp, %ebp\n"
	"	mov %r9, %rdi\n"
	"	call *%r8\n"
	"	mov %eax, %edi\n"
	"	mov $60, %eax\n" /* __NR_exit: this thread only */
	"	syscall\n"
	"	hlt\n"
	"1:	ret\n"
	".size corral_clone3_trampoline, .-corral_clone3_trampoline\n"
	".section .note.GNU-stack,\"\",@progbits\n"
	".text\n");

pid_t clone_run(struct clone_args *args, int (*fn)(void *), void *arg)
{
	return (pid_t)corral_clone3_trampoline(args, sizeof(*args), fn, arg);
}

#endif
