/* Libraries loaded when first needed: see library_loader.h. */
#include "isolation/library_loader.h"

#ifndef CORRAL_LIBRARIES_LINKED /* a static build loads nothing */

#include <dlfcn.h>
#include <stdio.h>

int library_load(const char *soname, void **handle, const char *(*resolve)(void *handle),
		 char *error, size_t error_size)
{
	if (*handle)
		return 0;
	void *opened = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!opened) {
		snprintf(error, error_size, "%s", dlerror());
		return -1;
	}
	const char *missing = resolve(opened);
	if (missing) {
		snprintf(error, error_size, "%s has no %s", soname, missing);
		dlclose(opened);
		return -1;
	}
	*handle = opened;
	return 0;
}

#endif
