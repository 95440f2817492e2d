/* libseccomp loaded when first needed: see seccomp_library.h. */
#include "isolation/seccomp_library.h"

LIBRARY_LOADER(seccomp_library_load, seccomp_library, SECCOMP_FUNCTIONS, SECCOMP_LIBRARY_SONAME)
