/**
 * Counts the `git http-backend` processes running in this process, per client address and in
 * all. Each one holds a CPU (pack-objects, index-pack) and memory for as long as the client
 * keeps it going, so one address may not hold them all (issue 18). The map holds only
 * addresses with a process running: it never has more entries than the total cap.
 */
export class BackendSlots {
  private readonly perAddress = new Map<string, number>();
  private running = 0;

  constructor(
    readonly maxPerAddress: number,
    readonly maxTotal: number,
  ) {}

  /** A release function (call it once, when the process ended), or why there is no slot. */
  acquire(address: string): (() => void) | 'address' | 'total' {
    const mine = this.perAddress.get(address) ?? 0;
    if (mine >= this.maxPerAddress) return 'address';
    if (this.running >= this.maxTotal) return 'total';
    this.perAddress.set(address, mine + 1);
    this.running += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= 1;
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left > 0) this.perAddress.set(address, left);
      else this.perAddress.delete(address);
    };
  }
}
