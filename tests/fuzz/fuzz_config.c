/* libFuzzer target: any bytes through the config parser must give a config
 * or diagnostics, never a crash, a leak or undefined behaviour. */
#include <stddef.h>
#include <stdint.h>

#include "config/load/config_load.h"
#include "isolation/seccomp_syscall_names.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* As cli/main.c: syscall names are checked against libseccomp's tables. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	config_use_syscall_names(seccomp_syscall_names());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_diagnostics diagnostics = {0};
	struct config *config =
	    config_parse_buffer("fuzz.yaml", (const char *)data, size, &diagnostics);
	config_free(config);
	config_diagnostics_free(&diagnostics);
	return 0;
}
