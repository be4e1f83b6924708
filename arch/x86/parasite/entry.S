/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Entry of every blob: the dumper starts a thread here with
 *   rdi = struct parasite_args *, rsi = thread index (0: the command loop),
 *   rdx = the thread's sigreturn frame, rsp = top of its stack in the area.
 * When parasite_main() returns, whatever the reason, the thread runs
 * rt_sigreturn on its frame and is back in its original state. The dumper
 * normally cancels that syscall at its entry stop; the jmp makes a thread
 * resumed after such a cancelled call (its dumper died) try again.
 */
	.section .head.text, "ax"
	.globl __export_entry
	.hidden __export_entry
__export_entry:
	movq	%rdx, %r12		/* callee-saved: survives parasite_main() */
	andq	$-16, %rsp
	call	parasite_main
	.globl __export_sigreturn
	.hidden __export_sigreturn
__export_sigreturn:
	leaq	8(%r12), %rsp		/* rt_sigreturn reads the frame at rsp - 8 */
	movl	$15, %eax		/* __NR_rt_sigreturn */
	syscall
	jmp	__export_sigreturn
	.globl __export_sigreturn_end
	.hidden __export_sigreturn_end
__export_sigreturn_end:
	.section .note.GNU-stack, "", @progbits
