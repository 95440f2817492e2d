#include "supervisor/control/control_socket_places.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/control/control_protocol.h"

static void add_place(struct control_socket_places *places, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void add_place(struct control_socket_places *places, const char *format, ...)
{
	char *slot = places->path[places->count];
	va_list arguments;
	va_start(arguments, format);
	int length = vsnprintf(slot, sizeof(places->path[0]), format, arguments);
	va_end(arguments);
	if (length > 0 && (size_t)length < sizeof(places->path[0]))
		places->count++;
}

const char *control_socket_given(const char *option)
{
	const char *from_environment = getenv("CORRAL_SOCKET");
	if (option)
		return option;
	return from_environment && *from_environment ? from_environment : NULL;
}

void control_socket_places(struct control_socket_places *places)
{
	const char *runtime_dir = getenv("XDG_RUNTIME_DIR");
	places->count = 0;
	add_place(places, "%s", CONTROL_SOCKET_DEFAULT);
	if (runtime_dir && runtime_dir[0] == '/')
		add_place(places, "%s/corral/control.sock", runtime_dir);
	add_place(places, "/tmp/corral-%u/control.sock", (unsigned)geteuid());
}

bool control_socket_is_default_place(const char *path)
{
	struct control_socket_places places;
	control_socket_places(&places);
	for (size_t i = 0; i < places.count; i++)
		if (strcmp(places.path[i], path) == 0)
			return true;
	return false;
}

const char *control_socket_find(const struct control_socket_places *places)
{
	const char *unreachable = NULL;
	for (size_t i = 0; i < places->count; i++) {
		struct stat status;
		if (lstat(places->path[i], &status) == 0) {
			if (S_ISSOCK(status.st_mode))
				return places->path[i];
		} else if (errno != ENOENT && errno != ENOTDIR && !unreachable) {
			unreachable = places->path[i];
		}
	}
	return unreachable ? unreachable : places->path[0];
}
