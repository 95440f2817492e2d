#include "cli/import/import_sources.h"
int s6_import(const char *path, struct ytree_node *config, struct import_report *report)
{
	(void)config;
	import_error(report, path, 0, "not yet");
	return -1;
}
