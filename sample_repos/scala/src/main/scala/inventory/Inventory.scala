package inventory

import scala.collection.mutable
import inventory.config.ConfigParser.{clamp, parseConfig}

/** Anything that can report a monetary value. */
trait Valued {
  /** Return the total value in the base currency. */
  def totalValue: Double
}

/** A single stock-keeping unit with a price and a quantity. */
case class Item(name: String, price: Double, quantity: Int = 1) {
  /** Return the total value of this item line. */
  def value: Double = price * quantity
}

/** An in-memory collection of items keyed by name. */
class Inventory(maxItems: Int = 100) extends Valued {
  private val items = mutable.LinkedHashMap.empty[String, Item]

  /** Summary statistics for an inventory snapshot. */
  case class Stats(count: Int, value: Double)

  /** Add an item, replacing any existing item with the same name. */
  def addItem(item: Item): Unit = {
    require(items.size < maxItems, "inventory is full")
    items(item.name) = item
  }

  /** Remove and return the item with the given name. */
  def removeItem(name: String): Option[Item] = items.remove(name)

  /** Return the summed value of every item. */
  def totalValue: Double = {
    def lineValue(item: Item): Double = item.value
    items.values.map(lineValue).sum
  }

  /** Return a Stats snapshot for this inventory. */
  def stats: Stats = Stats(items.size, totalValue)
}

/** Entry point and retry helpers. */
object Inventory {
  /** Return the retry delay for an attempt using capped exponential growth. */
  def computeBackoff(attempt: Int): Double = {
    val delay = 0.5 * math.pow(2, attempt)
    clamp(delay, 0.0, 30.0)
  }

  /** Build an inventory from config and print its total value. */
  def main(args: Array[String]): Unit = {
    val settings = parseConfig("inventory.conf")
    val inventory = new Inventory(settings.maxItems)
    inventory.addItem(Item("widget", 2.5, 4))
    inventory.addItem(Item("gadget", 10.0))
    inventory.removeItem("widget")
    println(inventory.totalValue)
    println(computeBackoff(3))
  }
}
