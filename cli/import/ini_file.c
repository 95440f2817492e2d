#include "cli/import/ini_file.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/regular_file.h"
#include "base/xmalloc.h"

#define INI_FILE_MAX_BYTES (4 * 1024 * 1024)

static char *trim(char *text)
{
	while (*text == ' ' || *text == '\t')
		text++;
	size_t length = strlen(text);
	while (length && isspace((unsigned char)text[length - 1]))
		text[--length] = '\0';
	return text;
}

/* A comment after a value starts with ; or # after white space. */
static void strip_inline_comment(char *value)
{
	for (char *p = value; *p; p++)
		if ((*p == ';' || *p == '#') && p > value && (p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			break;
		}
}

struct ini_section *ini_section(struct ini_file *ini, const char *name)
{
	for (size_t i = 0; i < ini->count; i++)
		if (strcmp(ini->sections[i].name, name) == 0)
			return &ini->sections[i];
	return NULL;
}

static struct ini_section *section_add(struct ini_file *ini, const char *name, const char *file,
				       unsigned line, const char *here)
{
	struct ini_section *section = ini_section(ini, name);
	if (section) {
		free(section->here);
		section->here = xstrdup(here);
		return section;
	}
	ini->sections = xreallocarray(ini->sections, ini->count + 1, sizeof(*ini->sections));
	section = &ini->sections[ini->count++];
	*section = (struct ini_section){
	    .name = xstrdup(name), .file = file, .line = line, .here = xstrdup(here)};
	return section;
}

static struct ini_value *value_set(struct ini_section *section, const char *key, const char *value,
				   const char *file, unsigned line)
{
	for (size_t i = 0; i < section->count; i++)
		if (strcmp(section->values[i].key, key) == 0) {
			free(section->values[i].value);
			section->values[i].value = xstrdup(value);
			section->values[i].file = file;
			section->values[i].line = line;
			return &section->values[i];
		}
	section->values =
	    xreallocarray(section->values, section->count + 1, sizeof(*section->values));
	struct ini_value *entry = &section->values[section->count++];
	*entry = (struct ini_value){
	    .key = xstrdup(key), .value = xstrdup(value), .file = file, .line = line};
	return entry;
}

int ini_file_read(struct ini_file *ini, const char *path, struct import_report *report)
{
	char *text, reason[REGULAR_FILE_REASON_SIZE];
	size_t size;
	if (regular_file_read(path, INI_FILE_MAX_BYTES, &text, &size, reason) < 0) {
		import_error(report, path, 0, "cannot read: %s", reason);
		return -1;
	}
	ini->files = xreallocarray(ini->files, ini->file_count + 1, sizeof(*ini->files));
	const char *file = ini->files[ini->file_count++] = xstrdup(path);
	const char *slash = strrchr(path, '/');
	char *here = slash ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
	int result = ini_file_parse(ini, text, file, here, report);
	free(here);
	free(text);
	return result;
}

int ini_file_parse(struct ini_file *ini, char *text, const char *file, const char *here,
		   struct import_report *report)
{
	struct ini_section *section = NULL;
	struct ini_value *last = NULL;
	unsigned number = 0;
	int result = 0;
	char *cursor = text;
	while (*cursor) {
		char *line = cursor, *end = strchr(cursor, '\n');
		if (end) {
			*end = '\0';
			cursor = end + 1;
		} else {
			cursor += strlen(cursor);
		}
		number++;
		bool indented = *line == ' ' || *line == '\t';
		char *content = trim(line);
		if (!*content) {
			last = NULL;
			continue;
		}
		if (*content == '#' || *content == ';')
			continue;
		if (indented && last) {
			/* A continuation line: the value goes on. */
			strip_inline_comment(content);
			char *joined = xasprintf("%s\n%s", last->value, trim(content));
			free(last->value);
			last->value = joined;
			continue;
		}
		if (*content == '[') {
			char *close = strchr(content, ']');
			if (!close) {
				import_error(report, file, number,
					     "a section header without ']': %s", content);
				result = -1;
				break;
			}
			*close = '\0';
			section = section_add(ini, trim(content + 1), file, number, here);
			last = NULL;
			continue;
		}
		char *separator = strpbrk(content, "=:");
		if (!separator || !section) {
			import_error(report, file, number,
				     section ? "not KEY = VALUE, a [section] or a comment: %s"
					     : "a value before any [section]: %s",
				     content);
			result = -1;
			break;
		}
		*separator = '\0';
		char *key = trim(content);
		for (char *p = key; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		char *value = separator + 1;
		strip_inline_comment(value);
		last = value_set(section, key, trim(value), file, number);
	}
	return result;
}

struct ini_value *ini_get(struct ini_section *section, const char *key)
{
	for (size_t i = 0; i < section->count; i++)
		if (strcmp(section->values[i].key, key) == 0) {
			section->values[i].used = true;
			return &section->values[i];
		}
	return NULL;
}

void ini_file_free(struct ini_file *ini)
{
	for (size_t i = 0; i < ini->count; i++) {
		struct ini_section *section = &ini->sections[i];
		for (size_t v = 0; v < section->count; v++) {
			free(section->values[v].key);
			free(section->values[v].value);
		}
		free(section->values);
		free(section->name);
		free(section->here);
	}
	free(ini->sections);
	for (size_t i = 0; i < ini->file_count; i++)
		free(ini->files[i]);
	free(ini->files);
}
