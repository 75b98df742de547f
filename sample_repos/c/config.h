/**
 * Configuration loading helpers for the inventory service.
 */
#ifndef INVENTORY_CONFIG_H
#define INVENTORY_CONFIG_H

#include <stddef.h>

/** Settings that control the inventory service. */
typedef struct Config {
    size_t max_items;
    char currency[4];
} Config;

/** Parse a key=value config file into cfg, falling back to defaults. */
int parse_config(const char *path, Config *cfg);

/** Restrict value to the closed interval [low, high]. */
double clamp(double value, double low, double high);

#endif /* INVENTORY_CONFIG_H */
