#include "supervisor/probes/resolver_library.h"

LIBRARY_LOADER(resolver_library_load, resolver_library, RESOLVER_FUNCTIONS, RESOLVER_LIBRARY_SONAME)
