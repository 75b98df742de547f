package inventory.config

import scala.io.Source
import scala.util.Using

/** Settings that control the inventory service. */
case class Settings(maxItems: Int = 100, currency: String = "USD")

/** Configuration loading helpers for the inventory service. */
object ConfigParser {

  /** Parse a key=value config file, falling back to defaults. */
  def parseConfig(path: String): Settings = {
    val pairs = Using(Source.fromFile(path)) { source =>
      source.getLines().flatMap(splitLine).toMap
    }.getOrElse(Map.empty[String, String])
    Settings(
      maxItems = pairs.get("max_items").map(_.toInt).getOrElse(100),
      currency = pairs.getOrElse("currency", "USD")
    )
  }

  /** Split one config line into a trimmed key and value. */
  private def splitLine(line: String): Option[(String, String)] =
    line.split("=", 2) match {
      case Array(key, value) => Some(key.trim -> value.trim)
      case _                 => None
    }

  /** Restrict value to the closed interval [low, high]. */
  def clamp(value: Double, low: Double, high: Double): Double =
    math.max(low, math.min(value, high))
}
