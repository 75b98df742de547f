package com.example;

public class Base {
    public void close() {
    }
}
