package io.latchkey.testkit;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.images.builder.ImageFromDockerfile;

/**
 * What every server fixture of the kit shares: the base image its Dockerfile builds from, and the
 * check that a Docker engine is there at all.
 */
public final class ServerImages {

    /** The system property that overrides the base image of every fixture's Dockerfile. */
    public static final String BASE_IMAGE_PROPERTY = "latchkey.testkit.baseImage";

    /** The base image used when the property is not set. */
    public static final String DEFAULT_BASE_IMAGE = "debian:bookworm-slim";

    private ServerImages() {
    }

    /** The base image for fixtures' Dockerfiles ({@code ARG BASE}). */
    public static String baseImage() {
        String image = System.getProperty(BASE_IMAGE_PROPERTY);
        return image == null || image.isBlank() ? DEFAULT_BASE_IMAGE : image.trim();
    }

    /**
     * The image {@code name}, built from the {@code Dockerfile} in the class-path folder {@code resourceDir}
     * (ending in {@code /}) and the {@code files} beside it, on {@link #baseImage()} ({@code ARG BASE}).
     * It is kept after the run, so that Docker's layer cache serves later runs.
     */
    public static ImageFromDockerfile fromDockerfile(String name, String resourceDir, String... files) {
        ImageFromDockerfile image = new ImageFromDockerfile(name, false)
                .withFileFromClasspath("Dockerfile", resourceDir + "Dockerfile");
        for (String file : files) {
            image = image.withFileFromClasspath(file, resourceDir + file);
        }
        return image.withBuildArg("BASE", baseImage());
    }

    /**
     * Fails with one clear message if no Docker engine answers: the contract runs on real servers,
     * and a test skipped for want of one proves nothing.
     */
    public static void requireDocker() {
        boolean available;
        try {
            available = DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException e) {
            available = false;
        }
        if (!available) {
            throw new IllegalStateException("the Latchkey contract tests need a Docker engine and none answers:"
                    + " start Docker (or set DOCKER_HOST) and run the tests again");
        }
    }
}
