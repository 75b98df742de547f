package com.example

interface Runner {
    fun run()
}

class Job : Runner {
    override fun run() {
    }
}
