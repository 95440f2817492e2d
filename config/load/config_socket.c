/* `socket:` alone, from YAML parsed but not read as a config: a client
 * command that only wants to know where corral listens should not need the
 * rest of the config to be valid, nor pay for reading thousands of tasks. */
#include "config/load/config_socket.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "base/cleanup.h"
#include "base/regular_file.h"
#include "config/load/config_load.h"
#include "config/load/config_parse.h"
#include "config/yaml/yaml_limits.h"

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_yaml_file(const struct dirent *entry)
{
	size_t length = strlen(entry->d_name);
	return entry->d_name[0] != '.' &&
	       ((length > 5 && strcmp(entry->d_name + length - 5, ".yaml") == 0) ||
		(length > 4 && strcmp(entry->d_name + length - 4, ".yml") == 0));
}

/* The scalar under the top-level key `socket` of one file: 1, 0 without
 * one, or -errno with `error`. */
static int read_file_socket(const char *path, char *socket, size_t socket_size, char *error,
			    size_t error_size)
{
	/* As the config is read (regular_file.h): a FIFO or /dev/zero named
	 * with -c must not hang the CLI, nor an alias bomb expand. */
	char reason[REGULAR_FILE_REASON_SIZE];
	_cleanup_free_ char *contents = NULL;
	size_t length = 0;
	int read = regular_file_read(path, CONFIG_FILE_MAX_BYTES, &contents, &length, reason);
	if (read < 0) {
		snprintf(error, error_size, "%s: cannot read: %s", path, reason);
		return read;
	}
	struct config_diagnostics diagnostics = {0};
	if (!yaml_within_limits(contents, length, 0, &diagnostics)) {
		config_diagnostic_format(&diagnostics, 0, path, error, error_size);
		config_diagnostics_free(&diagnostics);
		return -EINVAL;
	}
	yaml_parser_t parser;
	yaml_document_t document;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)contents, length);
	if (!yaml_parser_load(&parser, &document)) {
		snprintf(error, error_size, "%s:%zu:%zu: %s", path, parser.problem_mark.line + 1,
			 parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "bad YAML");
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	int found = 0;
	yaml_node_t *root = yaml_document_get_root_node(&document);
	for (yaml_node_pair_t *pair =
		 root && root->type == YAML_MAPPING_NODE ? root->data.mapping.pairs.start : NULL;
	     pair && pair < root->data.mapping.pairs.top; pair++) {
		yaml_node_t *key = yaml_document_get_node(&document, pair->key);
		yaml_node_t *value = yaml_document_get_node(&document, pair->value);
		if (!key || key->type != YAML_SCALAR_NODE ||
		    strcmp((const char *)key->data.scalar.value, "socket") != 0)
			continue;
		/* A `$` is checked once the variables are replaced. */
		const char *text = value && value->type == YAML_SCALAR_NODE
				       ? (const char *)value->data.scalar.value
				       : "";
		if (!*text || strlen(text) >= socket_size ||
		    (text[0] != '/' && !strchr(text, '$'))) {
			snprintf(
			    error, error_size,
			    "%s:%zu:%zu: socket: must be an absolute path of at most %zu bytes",
			    path, key->start_mark.line + 1, key->start_mark.column + 1,
			    socket_size - 1);
			found = -EINVAL;
		} else {
			snprintf(socket, socket_size, "%s", text);
			found = 1;
		}
		break;
	}
	yaml_document_delete(&document);
	yaml_parser_delete(&parser);
	return found;
}

static int read_directory_socket(const char *path, char *socket, size_t socket_size, char *error,
				 size_t error_size)
{
	struct dirent **entries;
	int count = scandir(path, &entries, is_yaml_file, by_name);
	if (count < 0) {
		int saved = errno;
		snprintf(error, error_size, "%s: %s", path, strerror(saved));
		return -saved;
	}
	int found = 0;
	for (int i = 0; i < count; i++) {
		if (found == 0) {
			char file[PATH_MAX];
			snprintf(file, sizeof(file), "%s/%s", path, entries[i]->d_name);
			found = read_file_socket(file, socket, socket_size, error, error_size);
		}
		free(entries[i]);
	}
	free(entries);
	return found;
}

/* Variables are replaced by the whole config's reading, errors and all. */
static int read_interpolated_socket(const char *path, char *socket, size_t socket_size, char *error,
				    size_t error_size)
{
	struct config_diagnostics diagnostics = {0};
	struct config *config = config_load_paths(&path, 1, &diagnostics);
	if (!config) {
		config_diagnostic_format(&diagnostics, 0, path, error, error_size);
		config_diagnostics_free(&diagnostics);
		return -EINVAL;
	}
	int found = config->socket_path != NULL;
	if (found)
		snprintf(socket, socket_size, "%s", config->socket_path);
	config_free(config);
	return found;
}

int config_read_socket(const char *path, char *socket, size_t socket_size, char *error,
		       size_t error_size)
{
	struct stat status;
	if (stat(path, &status) < 0) {
		int saved = errno;
		snprintf(error, error_size, "%s: %s", path, strerror(saved));
		return -saved;
	}
	int found = S_ISDIR(status.st_mode)
			? read_directory_socket(path, socket, socket_size, error, error_size)
			: read_file_socket(path, socket, socket_size, error, error_size);
	if (found == 1 && strchr(socket, '$'))
		return read_interpolated_socket(path, socket, socket_size, error, error_size);
	return found;
}
