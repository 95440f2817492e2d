#include "isolation/reaper_image.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* Linux 6.3 */
#endif

/* The build writes the reaper (CMake target corral-reaper) and names it in
 * CORRAL_REAPER_PATH; the assembler copies its bytes in. */
__asm__(".section .rodata\n"
	".balign 16\n"
	".global reaper_image\n"
	".hidden reaper_image\n"
	".type reaper_image, @object\n"
	"reaper_image:\n"
	".incbin \"" CORRAL_REAPER_PATH "\"\n"
	".global reaper_image_end\n"
	".hidden reaper_image_end\n"
	"reaper_image_end:\n"
	".previous\n");

extern const unsigned char reaper_image_end[];

size_t reaper_image_size(void)
{
	return (size_t)(reaper_image_end - reaper_image);
}

static int fill_and_seal(int fd)
{
	size_t size = reaper_image_size();
	for (size_t done = 0; done < size;) {
		ssize_t written = write(fd, reaper_image + done, size - done);
		if (written < 0 && errno == EINTR)
			continue;
		if (written <= 0)
			return written < 0 ? -errno : -EIO;
		done += (size_t)written;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0)
		return -errno;
	return 0;
}

int reaper_image_memfd(void)
{
	/* Since Linux 6.3 a memfd is executable only when asked (MFD_EXEC);
	 * older kernels refuse the flag and make every memfd executable. */
	int fd = memfd_create("corral-reaper", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (fd < 0 && errno == EINVAL)
		fd = memfd_create("corral-reaper", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	int failure = fill_and_seal(fd);
	if (failure < 0) {
		close(fd);
		return failure;
	}
	return fd;
}
