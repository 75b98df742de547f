package com.example.util

object Strings {
    fun upper(text: String): String = text
}

fun String.shout(): String = this

fun <T> Iterable<T>.firstOrNone(): T? = firstOrNull()

fun max(a: Int, b: Int): Int = a
