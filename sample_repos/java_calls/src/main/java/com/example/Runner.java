package com.example;

public interface Runner {
    void run();
}
