package com.example.util;

public final class Strings {
    public static String upper(String text) {
        return text;
    }

    public static String trim(String text) {
        return text;
    }
}
