/**
 * Implementation of the configuration helpers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/** Apply a single key/value pair to the config. */
static void apply_setting(Config *cfg, const char *key, const char *value)
{
    if (strcmp(key, "max_items") == 0) {
        cfg->max_items = (size_t)strtoul(value, NULL, 10);
    } else if (strcmp(key, "currency") == 0) {
        strncpy(cfg->currency, value, sizeof(cfg->currency) - 1);
    }
}

int parse_config(const char *path, Config *cfg)
{
    char line[256];
    FILE *fp;

    cfg->max_items = 100;
    strcpy(cfg->currency, "USD");
    fp = fopen(path, "r");
    if (fp == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), fp) != NULL) {
        char *eq = strchr(line, '=');
        if (eq == NULL) {
            continue;
        }
        *eq = '\0';
        line[strcspn(line, " ")] = '\0';
        eq[1 + strcspn(eq + 1, "\n")] = '\0';
        apply_setting(cfg, line, eq + 1);
    }
    fclose(fp);
    return 0;
}

double clamp(double value, double low, double high)
{
    if (value < low) {
        return low;
    }
    return value > high ? high : value;
}
