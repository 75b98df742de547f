package com.example;

import static com.example.util.Strings.trim;

import com.example.util.Strings;
import java.util.List;
import java.util.Map;

public class Cache extends Base {
    private final Store store = new Store();
    private final Map<String, String> map;
    private Runner runner;

    public Cache(Map<String, String> map) {
        this.map = map;
    }

    public String read(String key, Other other) {
        map.get(key);
        this.refresh(key);
        store.get(key);
        other.get(key);
        var fresh = new Store();
        fresh.put(key);
        runner.run();
        Strings.upper(key);
        trim(key);
        List<String> names = List.of(key);
        names.forEach(this::refresh);
        super.close();
        System.out.println(key);
        return key;
    }

    public String get(String key) {
        return key;
    }

    void refresh(String key) {
    }

    @Override
    public void close() {
    }
}
