// The JVM half of Crash Test's obfuscated build: the same crash as MainActivity.crash()
// ("Crash button tapped"), thrown a few calls deep so that ProGuard renames classes and methods,
// and a second throw site so that the two crashes get different fingerprints.
package dev.phonelogs.crashtest.jvm;

public final class CrashMain {
    public static void main(String[] args) {
        String which = args.length > 0 ? args[0] : "button";
        new Checkout(which).resume();
    }
}

final class Checkout {
    private final String which;

    Checkout(String which) {
        this.which = which;
    }

    void resume() {
        Cart cart = new Cart(which);
        cart.validate();
    }
}

final class Cart {
    private final String which;

    Cart(String which) {
        this.which = which;
    }

    void validate() {
        if (which.equals("total")) {
            checkTotal(-1);
        }
        tapped();
    }

    private void checkTotal(int total) {
        if (total < 0) {
            throw new CartException("negative total " + total);
        }
    }

    private void tapped() {
        throw new IllegalStateException("Crash button tapped");
    }
}

final class CartException extends RuntimeException {
    CartException(String message) {
        super(message);
    }
}
