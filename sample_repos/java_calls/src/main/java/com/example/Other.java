package com.example;

public class Other {
    public String get(String key) {
        return key;
    }
}
