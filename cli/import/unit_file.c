#include "cli/import/unit_file.h"

#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/regular_file.h"
#include "base/xmalloc.h"

/* A unit file is a few kB; a drop-in directory holds a handful. */
#define UNIT_FILE_MAX_BYTES (1024 * 1024)

static void add_setting(struct unit_file *unit, const char *section, const char *key,
			const char *value, const char *file, unsigned line)
{
	unit->settings = xreallocarray(unit->settings, unit->count + 1, sizeof(*unit->settings));
	unit->settings[unit->count++] = (struct unit_setting){
	    .section = xstrdup(section),
	    .key = xstrdup(key),
	    .value = xstrdup(value),
	    .file = file,
	    .line = line,
	};
}

static char *trim(char *text)
{
	while (*text == ' ' || *text == '\t')
		text++;
	size_t length = strlen(text);
	while (length &&
	       (text[length - 1] == ' ' || text[length - 1] == '\t' || text[length - 1] == '\r'))
		text[--length] = '\0';
	return text;
}

/* One line of the file at `cursor`, advanced past it; NULL at the end. */
static char *next_line(char **cursor, unsigned *number)
{
	if (!**cursor)
		return NULL;
	char *line = *cursor;
	char *end = strchr(line, '\n');
	if (end) {
		*end = '\0';
		*cursor = end + 1;
	} else {
		*cursor = line + strlen(line);
	}
	(*number)++;
	return line;
}

int unit_file_parse(struct unit_file *unit, char *text, const char *file,
		    struct import_report *report)
{
	char *cursor = text, *raw, section[64] = "";
	unsigned number = 0;
	while ((raw = next_line(&cursor, &number))) {
		char *line = trim(raw);
		unsigned first = number;
		if (!*line || *line == '#' || *line == ';')
			continue;
		if (*line == '[') {
			char *close = strchr(line, ']');
			if (!close || (size_t)(close - line - 1) >= sizeof(section)) {
				import_error(report, file, first,
					     "a section header without ']': %s", line);
				return -1;
			}
			snprintf(section, sizeof(section), "%.*s", (int)(close - line - 1),
				 line + 1);
			continue;
		}
		char *equals = strchr(line, '=');
		if (!equals) {
			import_error(report, file, first,
				     "not KEY=VALUE, a [Section] or a comment: %s", line);
			return -1;
		}
		*equals = '\0';
		char *key = trim(line);
		/* A trailing backslash continues the value on the next line,
		 * the backslash read as a space; comment lines between are
		 * skipped, as systemd does. */
		char *value = xstrdup(trim(equals + 1));
		size_t length = strlen(value);
		while (length && value[length - 1] == '\\') {
			value[length - 1] = ' ';
			char *more;
			while ((more = next_line(&cursor, &number))) {
				char *trimmed = trim(more);
				if (*trimmed != '#' && *trimmed != ';')
					break;
			}
			if (!more)
				break;
			char *joined = xasprintf("%s%s", value, trim(more));
			free(value);
			value = joined;
			length = strlen(value);
		}
		char *trimmed = trim(value);
		if (!*section)
			import_error(report, file, first, "%s= is outside any [Section]", key);
		else
			add_setting(unit, section, key, trimmed, file, first);
		free(value);
		if (!*section)
			return -1;
	}
	return 0;
}

static int read_one(struct unit_file *unit, const char *path, struct import_report *report)
{
	char *text, reason[REGULAR_FILE_REASON_SIZE];
	size_t size;
	char target[64];
	ssize_t link = readlink(path, target, sizeof(target) - 1);
	if (link == 9 && strncmp(target, "/dev/null", 9) == 0) {
		import_error(report, path, 0, "the unit is masked (a link to /dev/null)");
		return -1;
	}
	if (regular_file_read(path, UNIT_FILE_MAX_BYTES, &text, &size, reason) < 0) {
		import_error(report, path, 0, "cannot read: %s", reason);
		return -1;
	}
	unit->files = xreallocarray(unit->files, unit->file_count + 1, sizeof(*unit->files));
	char *kept = unit->files[unit->file_count++] = xstrdup(path);
	int result = unit_file_parse(unit, text, kept, report);
	free(text);
	return result;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* DIR/NAME.d/ *.conf in name order. A missing directory is no error. */
static int read_drop_ins(struct unit_file *unit, const char *dir, const char *name,
			 struct import_report *report)
{
	char *path = xasprintf("%s/%s.d", dir, name);
	DIR *directory = opendir(path);
	if (!directory) {
		free(path);
		return 0;
	}
	char **names = NULL;
	size_t count = 0;
	struct dirent *entry;
	while ((entry = readdir(directory))) {
		size_t length = strlen(entry->d_name);
		if (length > 5 && strcmp(entry->d_name + length - 5, ".conf") == 0) {
			names = xreallocarray(names, count + 1, sizeof(*names));
			names[count++] = xstrdup(entry->d_name);
		}
	}
	closedir(directory);
	qsort(names, count, sizeof(*names), compare_names);
	int result = 0;
	for (size_t i = 0; i < count; i++) {
		char *file = xasprintf("%s/%s", path, names[i]);
		if (result == 0 && read_one(unit, file, report) < 0)
			result = -1;
		free(file);
		free(names[i]);
	}
	free(names);
	free(path);
	return result;
}

int unit_file_load(struct unit_file *unit, const char *path, struct import_report *report)
{
	memset(unit, 0, sizeof(*unit));
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *dir = slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
	unit->name = xstrdup(base);
	char *dot = strrchr(unit->name, '.');
	size_t stem = dot ? (size_t)(dot - unit->name) : strlen(unit->name);
	char *at = memchr(unit->name, '@', stem);
	unit->prefix = xstrndup(unit->name, at ? (size_t)(at - unit->name) : stem);
	char *template_name = NULL;
	if (at && at + 1 < unit->name + stem) {
		unit->instance = xstrndup(at + 1, (size_t)(unit->name + stem - at - 1));
		template_name = xasprintf("%s@%s", unit->prefix, dot ? dot : "");
	}
	/* An instance is read from its template unless a file of its own
	 * name is there (systemd's order too). */
	if (template_name && access(path, F_OK) != 0)
		unit->path = xasprintf("%s/%s", dir, template_name);
	else
		unit->path = xstrdup(path);
	int result = read_one(unit, unit->path, report);
	if (result == 0 && template_name)
		result = read_drop_ins(unit, dir, template_name, report);
	if (result == 0)
		result = read_drop_ins(unit, dir, unit->name, report);
	free(template_name);
	free(dir);
	return result;
}

void unit_file_free(struct unit_file *unit)
{
	for (size_t i = 0; i < unit->count; i++) {
		free(unit->settings[i].section);
		free(unit->settings[i].key);
		free(unit->settings[i].value);
	}
	free(unit->settings);
	for (size_t i = 0; i < unit->file_count; i++)
		free(unit->files[i]);
	free(unit->files);
	free(unit->path);
	free(unit->name);
	free(unit->prefix);
	free(unit->instance);
}

static bool matches(const struct unit_setting *setting, const char *section, const char *key)
{
	return strcmp(setting->section, section) == 0 && strcmp(setting->key, key) == 0;
}

struct unit_setting *unit_last(struct unit_file *unit, const char *section, const char *key)
{
	struct unit_setting *last = NULL;
	for (size_t i = 0; i < unit->count; i++)
		if (matches(&unit->settings[i], section, key)) {
			unit->settings[i].used = true;
			last = &unit->settings[i];
		}
	return last;
}

struct unit_setting **unit_list(struct unit_file *unit, const char *section, const char *key,
				size_t *count)
{
	struct unit_setting **list = NULL;
	*count = 0;
	for (size_t i = 0; i < unit->count; i++) {
		struct unit_setting *setting = &unit->settings[i];
		if (!matches(setting, section, key))
			continue;
		setting->used = true;
		if (!*setting->value) {
			*count = 0;
			continue;
		}
		list = xreallocarray(list, *count + 1, sizeof(*list));
		list[(*count)++] = setting;
	}
	if (!*count) {
		free(list);
		return NULL;
	}
	return list;
}

/* systemd's unit name unescaping: "-" is "/", "\xNN" a byte. */
static char *unescape_instance(const char *text)
{
	char *out = xmalloc(strlen(text) + 1), *o = out;
	for (const char *p = text; *p; p++) {
		unsigned byte;
		if (*p == '-')
			*o++ = '/';
		else if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &byte) == 1) {
			*o++ = (char)byte;
			p += 3;
		} else
			*o++ = *p;
	}
	*o = '\0';
	return out;
}

static char *user_home(const char *user)
{
	if (!user || strcmp(user, "root") == 0 || strcmp(user, "0") == 0)
		return xstrdup("/root");
	struct passwd *entry = getpwnam(user);
	return entry ? xstrdup(entry->pw_dir) : NULL;
}

static char *specifier(const struct unit_file *unit, char letter, const char *user)
{
	const char *instance = unit->instance ? unit->instance : "";
	char hostname[256];
	switch (letter) {
	case 'n':
		return xstrdup(unit->name);
	case 'N': {
		char *dot = strrchr(unit->name, '.');
		return xstrndup(unit->name, dot ? (size_t)(dot - unit->name) : strlen(unit->name));
	}
	case 'p':
		return xstrdup(unit->prefix);
	case 'P':
		return unescape_instance(unit->prefix);
	case 'i':
		return xstrdup(instance);
	case 'I':
		return unescape_instance(instance);
	case 'j': {
		const char *dash = strrchr(unit->prefix, '-');
		return xstrdup(dash ? dash + 1 : unit->prefix);
	}
	case 'J': {
		char *last = specifier(unit, 'j', user), *out = unescape_instance(last);
		free(last);
		return out;
	}
	case 'f':
		return unit->instance ? xasprintf("/%s", instance) : xasprintf("/%s", unit->prefix);
	case 't':
		return xstrdup("/run");
	case 'S':
		return xstrdup("/var/lib");
	case 'C':
		return xstrdup("/var/cache");
	case 'L':
		return xstrdup("/var/log");
	case 'E':
		return xstrdup("/etc");
	case 'T':
		return xstrdup("/tmp");
	case 'V':
		return xstrdup("/var/tmp");
	case 'h':
		return user_home(user);
	case 'u':
		return xstrdup(user ? user : "root");
	case 'H':
		return gethostname(hostname, sizeof(hostname)) == 0 ? xstrdup(hostname) : NULL;
	case '%':
		return xstrdup("%");
	default:
		return NULL;
	}
}

char *unit_specifiers(const struct unit_file *unit, const char *value, const char *user,
		      char *unknown, size_t unknown_size)
{
	size_t capacity = strlen(value) + 1, length = 0;
	char *out = xmalloc(capacity);
	unknown[0] = '\0';
	for (const char *p = value; *p; p++) {
		char *replacement = NULL;
		if (*p == '%' && p[1]) {
			replacement = specifier(unit, p[1], user);
			if (!replacement && !unknown[0])
				snprintf(unknown, unknown_size, "%%%c", p[1]);
		}
		const char *piece = replacement ? replacement : p;
		size_t piece_length = replacement ? strlen(replacement) : 1;
		if (length + piece_length + 1 > capacity) {
			capacity = (length + piece_length + 1) * 2;
			out = xreallocarray(out, capacity, 1);
		}
		memcpy(out + length, piece, piece_length);
		length += piece_length;
		if (replacement) {
			p++;
			free(replacement);
		}
	}
	out[length] = '\0';
	return out;
}

int unit_boolean(const char *value)
{
	static const char *const yes[] = {"1", "yes", "y", "true", "t", "on", NULL};
	static const char *const no[] = {"0", "no", "n", "false", "f", "off", NULL};
	for (size_t i = 0; yes[i]; i++)
		if (strcasecmp(value, yes[i]) == 0)
			return 1;
	for (size_t i = 0; no[i]; i++)
		if (strcasecmp(value, no[i]) == 0)
			return 0;
	return -1;
}
