package io.spindle.core.engine;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * The allocations of one application or one node, in the order they were made, linked through their {@link Entry}s.
 *
 * <p>Linked rather than a set of ids: a container's start and end then add and remove it here without hashing.
 * With 100,000 containers running, the two hash-set updates per start and per end (an application's set, a node's
 * set) cost as much as finding the container's place.
 */
final class AllocationList implements Iterable<Long> {

  /** One allocation, linked into its application's list and its node's list. */
  static final class Entry {
    Allocation allocation;
    private AllocationList app;
    private AllocationList node;
    private Entry appPrev;
    private Entry appNext;
    private Entry nodePrev;
    private Entry nodeNext;

    Entry(Allocation allocation) {
      this.allocation = allocation;
    }

    /** Takes the allocation out of both lists it is in. */
    void unlink() {
      if (app != null) {
        app.remove(this);
      }
      if (node != null) {
        node.remove(this);
      }
    }
  }

  private final boolean ofNode;
  private Entry head;
  private Entry tail;
  private int size;

  private AllocationList(boolean ofNode) {
    this.ofNode = ofNode;
  }

  static AllocationList ofApp() {
    return new AllocationList(false);
  }

  static AllocationList ofNode() {
    return new AllocationList(true);
  }

  void add(Entry e) {
    if (ofNode) {
      e.node = this;
      e.nodePrev = tail;
    } else {
      e.app = this;
      e.appPrev = tail;
    }
    if (tail == null) {
      head = e;
    } else {
      setNext(tail, e);
    }
    tail = e;
    size++;
  }

  private void remove(Entry e) {
    Entry prev = ofNode ? e.nodePrev : e.appPrev;
    Entry next = next(e);
    if (prev == null) {
      head = next;
    } else {
      setNext(prev, next);
    }
    if (next == null) {
      tail = prev;
    } else if (ofNode) {
      next.nodePrev = prev;
    } else {
      next.appPrev = prev;
    }
    if (ofNode) {
      e.node = null;
      e.nodePrev = null;
      e.nodeNext = null;
    } else {
      e.app = null;
      e.appPrev = null;
      e.appNext = null;
    }
    size--;
  }

  private Entry next(Entry e) {
    return ofNode ? e.nodeNext : e.appNext;
  }

  private void setNext(Entry e, Entry next) {
    if (ofNode) {
      e.nodeNext = next;
    } else {
      e.appNext = next;
    }
  }

  int size() {
    return size;
  }

  boolean isEmpty() {
    return size == 0;
  }

  /** The ids as they are now: for callers that release while they walk. */
  List<Long> ids() {
    List<Long> out = new ArrayList<>(size);
    for (Entry e = head; e != null; e = next(e)) {
      out.add(e.allocation.id());
    }
    return out;
  }

  @Override
  public Iterator<Long> iterator() {
    return new Iterator<>() {
      private Entry at = head;

      @Override
      public boolean hasNext() {
        return at != null;
      }

      @Override
      public Long next() {
        if (at == null) {
          throw new NoSuchElementException();
        }
        long id = at.allocation.id();
        at = AllocationList.this.next(at);
        return id;
      }
    };
  }
}
