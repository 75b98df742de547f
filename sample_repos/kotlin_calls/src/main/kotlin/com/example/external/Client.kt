package com.example.external

import java.util.concurrent.ConcurrentHashMap

class Client(private val cache: ConcurrentHashMap<String, String>) {
    fun fetch(key: String): String? = cache.get(key)
}
