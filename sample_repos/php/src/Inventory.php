<?php

declare(strict_types=1);

namespace App\Inventory;

require_once __DIR__ . '/Config.php';

use App\Inventory\Config\ConfigParser;
use InvalidArgumentException;

/** Anything that can report a monetary value. */
interface Valued
{
    /** Return the total value in the base currency. */
    public function totalValue(): float;
}

/**
 * A single stock-keeping unit with a price and a quantity.
 */
final class Item
{
    public function __construct(
        public readonly string $name,
        public readonly float $price,
        public readonly int $quantity = 1,
    ) {
    }

    /** Return the total value of this item line. */
    public function value(): float
    {
        return $this->price * $this->quantity;
    }
}

/**
 * An in-memory collection of items keyed by name.
 */
class Inventory implements Valued
{
    /** @var array<string, Item> */
    private array $items = [];

    public function __construct(private int $maxItems = 100)
    {
    }

    /** Add an item, replacing any existing item with the same name. */
    public function addItem(Item $item): void
    {
        if (count($this->items) >= $this->maxItems) {
            throw new InvalidArgumentException('inventory is full');
        }
        $this->items[$item->name] = $item;
    }

    /** Remove and return the item with the given name. */
    public function removeItem(string $name): ?Item
    {
        $item = $this->items[$name] ?? null;
        unset($this->items[$name]);
        return $item;
    }

    /** Return the summed value of every item. */
    public function totalValue(): float
    {
        $lineValue = function (Item $item): float {
            return $item->value();
        };
        return array_sum(array_map($lineValue, $this->items));
    }
}

/**
 * Return the retry delay for an attempt using capped exponential growth.
 */
function computeBackoff(int $attempt, float $base = 0.5, float $cap = 30.0): float
{
    $delay = $base * (2 ** $attempt);
    return ConfigParser::clamp($delay, 0.0, $cap);
}

$settings = ConfigParser::parseConfig('inventory.ini');
$inventory = new Inventory($settings['max_items']);
$inventory->addItem(new Item('widget', 2.5, 4));
$inventory->removeItem('widget');
echo $inventory->totalValue(), ' ', computeBackoff(3), PHP_EOL;
