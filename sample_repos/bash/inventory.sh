#!/usr/bin/env bash
# Inventory service: stores items and computes their total value.

set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=config.sh
source "${SCRIPT_DIR}/config.sh"

# Item prices and quantities, keyed by item name.
declare -A ITEM_PRICE=()
declare -A ITEM_QTY=()
MAX_ITEMS=100

# Add an item, replacing any existing item with the same name.
# Arguments: name, price (in cents), quantity
inventory_add_item() {
  local name="$1" price="$2" qty="${3:-1}"
  if (( ${#ITEM_PRICE[@]} >= MAX_ITEMS )); then
    echo "inventory is full" >&2
    return 1
  fi
  ITEM_PRICE["$name"]="$price"
  ITEM_QTY["$name"]="$qty"
}

# Remove the item with the given name.
inventory_remove_item() {
  local name="$1"
  unset 'ITEM_PRICE[$name]' 'ITEM_QTY[$name]'
}

# Print the summed value of every item, in cents.
inventory_total_value() {
  # Print the value of a single item line.
  line_value() {
    echo $(( ITEM_PRICE[$1] * ITEM_QTY[$1] ))
  }
  local total=0 name
  for name in "${!ITEM_PRICE[@]}"; do
    total=$(( total + $(line_value "$name") ))
  done
  echo "$total"
}

# Print the retry delay in seconds for an attempt using capped exponential growth.
compute_backoff() {
  local attempt="$1"
  local delay=$(( 1 << attempt ))
  clamp "$delay" 0 30
}

# Build an inventory from config and print its total value.
main() {
  parse_config "${SCRIPT_DIR}/inventory.conf"
  MAX_ITEMS="${CONFIG[max_items]}"
  inventory_add_item widget 250 4
  inventory_add_item gadget 1000
  inventory_remove_item widget
  inventory_total_value
  compute_backoff 3
}

main "$@"
