/* Libraries that corral loads the first time it needs them, not when it
 * starts: libnl-route, libseccomp and libcgroup.
 *
 * Why: a linked library is mapped, relocated and initialised by every
 * corral process, CLI calls included, whether it is used or not. A
 * supervisor whose tasks have no isolation never builds a seccomp filter,
 * one on a pure cgroup v2 host never touches a v1 hierarchy, and `corral
 * status` needs none of them (figures: docs/benchmarks.md, "Libraries
 * loaded when first needed"; docs/decisions.md says why this departs
 * from linking them). systemd loads its optional libraries the same way.
 *
 * Each library has an X-macro list of the functions corral calls, a table
 * of pointers with the functions' own types (LIBRARY_MEMBER), and a load
 * function made by LIBRARY_LOADER. Its callers call only through the
 * table. A static build (CORRAL_LIBRARIES_LINKED) links the libraries in
 * and the table holds their functions: nothing is loaded there. */
#pragma once

#include <stddef.h>

#define LIBRARY_MEMBER(name) __typeof__(name) *name;

/* dlopens `soname` once, RTLD_NOW so that a missing function fails here
 * and not in the middle of a task's set-up, and has `resolve` fill the
 * table; the library then stays loaded for corral's life. 0, or -1 with
 * the loader's reason in `error` (and the next call tries again). */
int library_load(const char *soname, void **handle, const char *(*resolve)(void *handle),
		 char *error, size_t error_size);

/* Defines `const struct TABLE *FUNCTION(char *error, size_t error_size)`:
 * the table of the functions of FUNCTIONS, loaded from SONAME on the first
 * call; NULL with the reason in `error` when it cannot be. */
#ifdef CORRAL_LIBRARIES_LINKED
#define LIBRARY_LINKED(name) .name = name,
#define LIBRARY_LOADER(FUNCTION, TABLE, FUNCTIONS, SONAME)                                         \
	const struct TABLE *FUNCTION(char *error, size_t error_size)                               \
	{                                                                                          \
		(void)error;                                                                       \
		(void)error_size;                                                                  \
		static const struct TABLE linked = {FUNCTIONS(LIBRARY_LINKED)};                    \
		return &linked;                                                                    \
	}
#else
#include <dlfcn.h>
#define LIBRARY_RESOLVE(name)                                                                      \
	if (!(loaded_table.name = (__typeof__(name) *)dlsym(handle, #name)))                       \
		return #name;
#define LIBRARY_LOADER(FUNCTION, TABLE, FUNCTIONS, SONAME)                                         \
	static struct TABLE loaded_table;                                                          \
	/* The name of a function the library lacks, or NULL. */                                   \
	static const char *resolve_table(void *handle)                                             \
	{                                                                                          \
		FUNCTIONS(LIBRARY_RESOLVE)                                                         \
		return NULL;                                                                       \
	}                                                                                          \
	const struct TABLE *FUNCTION(char *error, size_t error_size)                               \
	{                                                                                          \
		static void *handle;                                                               \
		return library_load(SONAME, &handle, resolve_table, error, error_size) == 0        \
			   ? &loaded_table                                                         \
			   : NULL;                                                                 \
	}
#endif
