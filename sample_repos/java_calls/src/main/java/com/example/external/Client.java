package com.example.external;

import org.thirdparty.Store;

public class Client {
    private Store store;

    public String fetch(String key) {
        return store.get(key);
    }
}
