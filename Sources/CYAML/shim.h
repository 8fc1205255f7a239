#ifndef CYAML_SHIM_H
#define CYAML_SHIM_H
/* libyaml (yaml-0.1): the parser API used by YAMLKit. */
#include <yaml.h>
#endif
