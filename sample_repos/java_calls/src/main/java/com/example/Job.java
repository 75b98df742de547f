package com.example;

public class Job implements Runner {
    @Override
    public void run() {
    }
}
