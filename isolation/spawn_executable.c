#include "isolation/spawn_executable.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xmalloc.h"

static const char *env_lookup(char *const *envp, const char *name)
{
	size_t length = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, length) == 0 && (*envp)[length] == '=')
			return *envp + length + 1;
	return NULL;
}

const char *spawn_resolve_executable(const char *argv0, char *const *envp, char *buffer,
				     size_t size)
{
	return spawn_resolve_executable_in(NULL, argv0, envp, buffer, size);
}

/* `candidate` as the task will see it, looked at through `root`. */
static bool is_executable_in(const char *root, const char *candidate)
{
	char rooted[PATH_MAX];
	if (!root)
		return access(candidate, X_OK) == 0;
	int written = snprintf(rooted, sizeof(rooted), "%s/%s", root, candidate);
	return written > 0 && (size_t)written < sizeof(rooted) && access(rooted, X_OK) == 0;
}

const char *spawn_resolve_executable_in(const char *root, const char *argv0, char *const *envp,
					char *buffer, size_t size)
{
	if (strchr(argv0, '/'))
		return argv0;
	const char *path = env_lookup(envp, "PATH");
	if (!path)
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	while (*path) {
		const char *end = strchrnul(path, ':');
		size_t dir_length = (size_t)(end - path);
		/* An empty PATH entry means the current directory. */
		int written = dir_length
				  ? snprintf(buffer, size, "%.*s/%s", (int)dir_length, path, argv0)
				  : snprintf(buffer, size, "./%s", argv0);
		if (written > 0 && (size_t)written < size && is_executable_in(root, buffer))
			return buffer;
		path = *end ? end + 1 : end;
	}
	return argv0;
}

char **spawn_join_executable_candidates(const char *argv0, char *const *envp)
{
	const char *path = strchr(argv0, '/') ? "" : env_lookup(envp, "PATH");
	/* glibc's execvpe, for an environment without one. */
	if (!path)
		path = "/bin:/usr/bin";
	size_t count = 1;
	for (const char *c = path; *c; c++)
		count += *c == ':';
	char **candidates = xcalloc(count + 1, sizeof(*candidates));
	if (strchr(argv0, '/')) {
		candidates[0] = xstrdup(argv0);
		return candidates;
	}
	size_t used = 0;
	for (const char *start = path;; start++) {
		const char *end = strchrnul(start, ':');
		/* An empty entry is the working directory. */
		if (end == start)
			candidates[used++] = xstrdup(argv0);
		else
			candidates[used++] = xasprintf("%.*s/%s", (int)(end - start), start, argv0);
		if (!*end)
			break;
		start = end;
	}
	return candidates;
}

void spawn_join_candidates_free(char **candidates)
{
	for (char **candidate = candidates; candidate && *candidate; candidate++)
		free(*candidate);
	free(candidates);
}
