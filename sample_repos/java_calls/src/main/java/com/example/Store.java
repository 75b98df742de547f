package com.example;

public class Store {
    public String get(String key) {
        return key;
    }

    public void put(String key) {
    }
}
