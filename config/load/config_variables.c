/* `interpolate: true` (top level): variables in the config's string values
 * are replaced from corral's environment before anything is read
 * (config/text/interpolate.h has the rules). Off by default: a config written
 * before it holds shell commands full of `$` that must reach the shell. */
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "config/load/config_parse.h"
#include "config/text/interpolate.h"
#include "config/yaml/diagnostics.h"

static const char *from_environment(void *context, const char *name)
{
	(void)context;
	return getenv(name);
}

void config_interpolate_document(struct load_context *context, yaml_document_t *document)
{
	size_t count = (size_t)(document->nodes.top - document->nodes.start);
	bool *is_key = calloc(count + 1, sizeof(*is_key));
	if (!is_key)
		abort();
	for (yaml_node_t *node = document->nodes.start; node < document->nodes.top; node++)
		if (node->type == YAML_MAPPING_NODE)
			for (yaml_node_pair_t *pair = node->data.mapping.pairs.start;
			     pair < node->data.mapping.pairs.top; pair++)
				if (pair->key >= 1 && (size_t)pair->key <= count)
					is_key[pair->key - 1] = true;
	for (size_t i = 0; i < count; i++) {
		yaml_node_t *node = document->nodes.start + i;
		if (node->type != YAML_SCALAR_NODE || is_key[i] ||
		    !memchr(node->data.scalar.value, '$', node->data.scalar.length))
			continue;
		char *value;
		size_t length;
		struct interpolate_error error;
		if (interpolate((const char *)node->data.scalar.value, node->data.scalar.length,
				from_environment, NULL, &value, &length, &error) < 0) {
			diagnostics_add(context->diagnostics, scalar_location(node, error.offset),
					"%s", error.message);
			continue;
		}
		/* libyaml frees its strings with free(): ours takes the place. */
		free(node->data.scalar.value);
		node->data.scalar.value = (yaml_char_t *)value;
		node->data.scalar.length = length;
	}
	free(is_key);
}
