package com.example.inventory

import com.example.inventory.config.clamp
import com.example.inventory.config.parseConfig
import kotlin.math.pow

/**
 * A single stock-keeping unit with a price and a quantity.
 */
data class Item(val name: String, val price: Double, val quantity: Int = 1) {
    /** Return the total value of this item line. */
    fun value(): Double = price * quantity
}

/**
 * Anything that can report a monetary value.
 */
interface Valued {
    /** Return the total value in the base currency. */
    fun totalValue(): Double
}

/**
 * An in-memory collection of items keyed by name.
 */
class Inventory(private val maxItems: Int = 100) : Valued {
    private val items = mutableMapOf<String, Item>()

    /** Summary statistics for an inventory snapshot. */
    data class Stats(val count: Int, val value: Double)

    /** Add an item, replacing any existing item with the same name. */
    fun addItem(item: Item) {
        check(items.size < maxItems) { "inventory is full" }
        items[item.name] = item
    }

    /** Remove and return the item with the given name. */
    fun removeItem(name: String): Item? = items.remove(name)

    /** Return the summed value of every item. */
    override fun totalValue(): Double {
        fun lineValue(item: Item): Double = item.value()
        return items.values.sumOf { lineValue(it) }
    }

    /** Return a Stats snapshot for this inventory. */
    fun stats(): Stats = Stats(items.size, totalValue())
}

/**
 * Retry policy helpers.
 */
object Backoff {
    private const val BASE = 0.5
    private const val CAP = 30.0

    /** Return the retry delay for an attempt using capped exponential growth. */
    fun computeBackoff(attempt: Int): Double {
        val delay = BASE * 2.0.pow(attempt)
        return clamp(delay, 0.0, CAP)
    }
}

/** Build an inventory from config and print its total value. */
fun main() {
    val settings = parseConfig("inventory.properties")
    val inventory = Inventory(settings.maxItems)
    inventory.addItem(Item("widget", 2.5, 4))
    inventory.addItem(Item("gadget", 10.0))
    inventory.removeItem("widget")
    println(inventory.totalValue())
    println(Backoff.computeBackoff(3))
}
