/* s6-overlay v2: /etc/cont-init.d scripts run in name order before the
 * services, /etc/services.d longruns, /etc/cont-finish.d scripts after. */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/regular_file.h"
#include "base/xmalloc.h"
#include "cli/import/import_names.h"
#include "cli/import/import_s6.h"

void s6_import_scripts(struct s6 *import, const char *dir, const char *stage, const char *what)
{
	char **names = s6_entries(dir);
	for (size_t i = 0; names[i]; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]);
		char *origin = xasprintf("%s (%s)", path, what);
		struct ytree_node *task = s6_new_task(import, names[i], origin);
		ytree_set(task, "command", s6_script_command(path, task));
		struct ytree_node *lifecycle = ytree_set(task, "lifecycle", ytree_map());
		lifecycle->flow = true;
		ytree_set(lifecycle, "hook", ytree_plain(stage));
		free(origin);
		free(path);
	}
	if (names[0] && strcmp(stage, "prestart") == 0) {
		ytree_set(import->group, "order", ytree_plain("sequential"));
		ytree_comment(import->group, "order",
			      "cont-init.d scripts run one after another in name order, before the "
			      "services");
	}
	s6_free_entries(names);
}

void s6_import_services_d(struct s6 *import, const char *dir)
{
	char **names = s6_entries(dir);
	for (size_t i = 0; names[i]; i++) {
		char *service = xasprintf("%s/%s", dir, names[i]);
		char *run = xasprintf("%s/run", service);
		if (s6_is_file(run)) {
			char *origin = xasprintf("%s (services.d)", service);
			struct ytree_node *task = s6_new_task(import, names[i], origin);
			ytree_set(task, "command", s6_script_command(run, task));
			s6_longrun_restart(task);
			char *finish = xasprintf("%s/finish", service);
			if (s6_is_file(finish))
				s6_add_finish_hook(task, finish);
			free(finish);
			char *fd = s6_read_small(service, "notification-fd");
			if (fd) {
				struct ytree_node *readiness =
				    ytree_set(task, "readiness", ytree_map());
				readiness->flow = true;
				ytree_set(readiness, "notify", ytree_plain("fd"));
				ytree_set(readiness, "fd", ytree_plain(fd));
				free(fd);
			}
			free(origin);
		}
		free(run);
		free(service);
	}
	s6_free_entries(names);
}
