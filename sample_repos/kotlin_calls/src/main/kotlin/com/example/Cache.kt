package com.example

import com.example.util.Strings
import com.example.util.firstOrNone
import com.example.util.shout
import kotlin.math.max

class Cache(private val store: Store, private val runner: Runner?) : Base() {
    private val map: MutableMap<String, String> = mutableMapOf()

    fun read(key: String, other: Other): String {
        map.remove(key)
        this.refresh(key)
        store.get(key)
        other.get(key)
        val fresh = Store()
        fresh.put(key)
        runner?.run()
        Strings.upper(key)
        key.shout()
        val keys: Set<String> = map.keys
        keys.firstOrNone()
        max(1, 2)
        listOf(key).forEach(::refresh)
        super.close()
        return key
    }

    fun remove(key: String): Boolean = true

    fun refresh(key: String) {
    }

    override fun close() {
    }
}
