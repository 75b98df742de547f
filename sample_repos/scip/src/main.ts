import { Circle, makeSquare } from "./shapes";
import { Stack } from "./stack";

function total(values: number[]): number {
  const square = makeSquare(3);
  const largest = Math.max(...values);
  return square.area() + largest;
}

function collect(): Stack<number> {
  const stack = new Stack<number>();
  stack.push(total([1, 2]));
  return stack;
}

export function report(): string {
  const circle = new Circle(1);
  const sizes: number[] = [];
  sizes.push(circle.area());
  const measure = circle.describe;
  return [circle.describe(), String(collect().max()), String(measure)].join(" ");
}

export function summary(stack: Stack<number>): string {
  function describeTop(): string {
    return String(stack.peek(0));
  }
  return `${stack.size} ${describeTop()}`;
}
