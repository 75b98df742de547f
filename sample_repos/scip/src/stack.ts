export class Stack<T> {
  private items: T[] = [];

  push(item: T): void {
    this.items.push(item);
  }

  max(): number {
    return this.items.length;
  }

  peek(): T | undefined;
  peek(fallback: T): T;
  peek(fallback?: T): T | undefined {
    return this.items[this.items.length - 1] ?? fallback;
  }

  get size(): number {
    return this.items.length;
  }
}
