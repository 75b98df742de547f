#!/usr/bin/env bash
# Configuration loading helpers for the inventory service.

# Settings read from the config file, keyed by name.
declare -A CONFIG=(
  [max_items]=100
  [currency]=USD
)

# Trim leading and trailing whitespace from a string.
trim() {
  local value="$1"
  value="${value#"${value%%[![:space:]]*}"}"
  value="${value%"${value##*[![:space:]]}"}"
  printf '%s' "$value"
}

# Parse a key=value config file into CONFIG, falling back to defaults.
# Arguments: path
parse_config() {
  local path="$1" key value
  [[ -f "$path" ]] || return 0
  while IFS='=' read -r key value; do
    [[ -z "$key" || "$key" == \#* ]] && continue
    CONFIG["$(trim "$key")"]="$(trim "$value")"
  done < "$path"
}

# Print value restricted to the closed interval [low, high].
# Arguments: value, low, high
clamp() {
  local value="$1" low="$2" high="$3"
  if (( value < low )); then
    echo "$low"
  elif (( value > high )); then
    echo "$high"
  else
    echo "$value"
  fi
}
