export class Stack<T> {
  private items: T[] = [];

  push(item: T): void {
    this.items.push(item);
  }

  max(): number {
    return this.items.length;
  }
}
