package com.example

class Other {
    fun get(key: String): String = key
}
