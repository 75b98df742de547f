package com.example

open class Base {
    open fun close() {
    }
}
